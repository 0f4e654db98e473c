#ifndef PLACEMENT_SERVICES_CONSOLE_RENDER_PAGES_H_
#define PLACEMENT_SERVICES_CONSOLE_RENDER_PAGES_H_

// The content of each page (inside RenderDocument's frame), from its model
// alone: no I/O, so that every page renders in a unit test. Each renderer
// is in its own file (render/<page>_page.cc).

#include <string>

#include "services/console/models.h"

namespace placement::services::console {

std::string RenderPoolsPage(const PoolsPage& page);
std::string RenderPoolPage(const PoolPage& page);
std::string RenderPlansPage(const PlansPage& page);
std::string RenderPlanPage(const PlanPage& page);
std::string RenderAccuracyPage(const AccuracyPage& page);
std::string RenderCostPage(const CostPage& page);
std::string RenderStandardsPage(const StandardsPage& page);

// The cost page's download: the rows grouped by the page's dimension and
// day, with the columns (and their formats) of `placectl cost --csv`.
std::string RenderCostCsv(const CostPage& page);

}  // namespace placement::services::console

#endif  // PLACEMENT_SERVICES_CONSOLE_RENDER_PAGES_H_
