#ifndef PLACEMENT_SERVICES_SERVER_VERSION_H_
#define PLACEMENT_SERVICES_SERVER_VERSION_H_

namespace placement::services {

// Set by CMake from the project version.
inline constexpr char kVersion[] = PLACEMENT_VERSION;

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_SERVER_VERSION_H_
