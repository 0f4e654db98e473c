#ifndef PLACEMENT_SERVICES_UUID_H_
#define PLACEMENT_SERVICES_UUID_H_

#include <string>

namespace placement::services {

// A random (version 4) UUID in canonical form.
std::string NewUuid();

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_UUID_H_
