#include "services/console/models.h"

namespace placement::services::console {

const char* CostGroupingName(CostGrouping grouping) {
  switch (grouping) {
    case CostGrouping::kSku:
      return "sku";
    case CostGrouping::kPool:
      return "pool";
    case CostGrouping::kTeam:
      break;
  }
  return "team";
}

}  // namespace placement::services::console
