#ifndef PLACEMENT_SERVICES_CONSOLE_RENDER_LAYOUT_H_
#define PLACEMENT_SERVICES_CONSOLE_RENDER_LAYOUT_H_

// The documents around the pages: the frame of a page of data, the sign-in
// form and the error pages. No inline script or style anywhere: the
// stylesheet and the script are files placementd serves (/assets/).

#include <string>

#include "absl/strings/string_view.h"
#include "core/field_violation.h"
#include "services/console/models.h"

namespace placement::services::console {

// A page of data: `content` inside the frame (navigation, who is looking,
// when the data was read, which sections the role withholds).
std::string RenderDocument(const PageFrame& frame, absl::string_view content);

// The sign-in form; `message` (escaped) above it when not empty.
std::string RenderLoginPage(absl::string_view message);

// An error page: its status, a title, a message and, for a refused query,
// each parameter and what is wrong with it. `sign_in`: offer /login.
std::string RenderErrorPage(int status, absl::string_view title,
                            absl::string_view message,
                            const core::FieldViolations& violations,
                            bool sign_in);

}  // namespace placement::services::console

#endif  // PLACEMENT_SERVICES_CONSOLE_RENDER_LAYOUT_H_
