#ifndef PLACEMENT_CLIENTS_PLACECTL_CATALOG_COMMANDS_H_
#define PLACEMENT_CLIENTS_PLACECTL_CATALOG_COMMANDS_H_

#include <string>
#include <vector>

namespace placement::placectl {

// `placectl skus [NAME]`: the SKU catalog, or one SKU by exact name.
int RunSkus(const std::vector<std::string>& args);

// `placectl pools list|get NAME|create|update NAME`.
int RunPools(const std::vector<std::string>& args);

}  // namespace placement::placectl

#endif  // PLACEMENT_CLIENTS_PLACECTL_CATALOG_COMMANDS_H_
