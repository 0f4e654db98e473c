#ifndef PLACEMENT_SERVICES_CONSOLE_EMBEDDED_ASSETS_H_
#define PLACEMENT_SERVICES_CONSOLE_EMBEDDED_ASSETS_H_

#include <string_view>
#include <vector>

namespace placement::services::console {

// A file of services/console/assets/, compiled into placementd
// (cmake/EmbedConsoleAssets.cmake): the console reads no file at run time
// and downloads nothing.
struct EmbeddedAsset {
  const char* path;  // "/assets/console.css"
  const char* content_type;
  std::string_view body;
};

const std::vector<EmbeddedAsset>& EmbeddedAssets();

}  // namespace placement::services::console

#endif  // PLACEMENT_SERVICES_CONSOLE_EMBEDDED_ASSETS_H_
