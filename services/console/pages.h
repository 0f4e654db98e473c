#ifndef PLACEMENT_SERVICES_CONSOLE_PAGES_H_
#define PLACEMENT_SERVICES_CONSOLE_PAGES_H_

// Each page's parameters and its read-and-render: the parameters are
// checked on the request's thread, before any database work; the work that
// PreparePage returns reads (page_reads.h) and renders (render/) on a
// database worker.

#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/civil_time.h"
#include "services/console/http/http_message.h"
#include "services/console/http/query.h"
#include "services/console/page_reads.h"
#include "services/console/routes.h"

namespace placement::services::console {

// Reads and renders a page (a document, or the cost CSV); fills
// `context.frame`'s title and withheld sections.
using PageWork =
    std::function<absl::StatusOr<HttpResponse>(const ReadContext& context)>;

// The page's parameters checked: INVALID_ARGUMENT naming every bad or
// unknown parameter. `today`: the UTC day ranges end on by default.
absl::StatusOr<PageWork> PreparePage(PageId page,
                                     const std::vector<QueryParam>& params,
                                     absl::CivilDay today);

}  // namespace placement::services::console

#endif  // PLACEMENT_SERVICES_CONSOLE_PAGES_H_
