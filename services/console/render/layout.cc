#include "services/console/render/layout.h"

#include "absl/strings/str_cat.h"
#include "services/console/render/html.h"

namespace placement::services::console {
namespace {

std::string Head(absl::string_view title) {
  return absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, "
      "initial-scale=1\"><title>",
      Esc(title),
      " · placement</title><link rel=\"icon\" href=\"/assets/favicon.svg\" "
      "type=\"image/svg+xml\"><link rel=\"stylesheet\" "
      "href=\"/assets/console.css\"><script src=\"/assets/console.js\" "
      "defer></script></head>");
}

}  // namespace

std::string RenderDocument(const PageFrame& frame, absl::string_view content) {
  std::string out = Head(frame.title);
  absl::StrAppend(&out, "<body><header><span class=\"brand\">placement</span>",
                  "<nav>");
  for (const Route* route : frame.nav) {
    const bool current =
        route->kind == RouteKind::kPage && route->page == frame.page;
    absl::StrAppend(&out, "<a href=\"", route->path, "\"",
                    current ? " class=\"current\" aria-current=\"page\"" : "",
                    ">", Esc(route->nav_title), "</a>");
  }
  absl::StrAppend(
      &out, "</nav><span class=\"viewer\">", Esc(frame.viewer),
      "</span><form method=\"post\" action=\"/logout\" class=\"logout\">"
      "<button type=\"submit\">Sign out</button></form></header><main id=\"",
      RouteOf(frame.page).label, "\"><h1>", Esc(frame.title), "</h1>");
  if (!frame.withheld.empty()) {
    absl::StrAppend(&out, "<p class=\"withheld\">Not shown to your role: ");
    for (size_t i = 0; i < frame.withheld.size(); ++i) {
      absl::StrAppend(&out, i == 0 ? "" : "; ", Esc(frame.withheld[i]));
    }
    absl::StrAppend(&out, ".</p>");
  }
  absl::StrAppend(
      &out, content, "</main><footer>Read ", UtcTime(frame.rendered_at),
      "; pools, evidence and standards as of ", UtcTime(frame.snapshot_time),
      ". Every figure is the API's answer for the same data "
      "(docs/CONSOLE.md).</footer></body></html>\n");
  return out;
}

std::string RenderLoginPage(absl::string_view message) {
  std::string out = Head("Sign in");
  absl::StrAppend(
      &out,
      "<body><header><span class=\"brand\">placement</span></header>"
      "<main id=\"login\"><h1>Sign in</h1>");
  if (!message.empty()) {
    absl::StrAppend(&out, "<p class=\"error\">", Esc(message), "</p>");
  }
  absl::StrAppend(
      &out,
      "<p>Paste an API token (<code>placectl tokens create --role ROLE "
      "--name NAME</code>). The console keeps it in a cookie only this site "
      "sends and no script can read, and shows what the token's role may "
      "read through the API.</p>"
      "<form method=\"post\" action=\"/login\" class=\"login\">"
      "<label for=\"token\">Token</label> <input id=\"token\" name=\"token\" "
      "type=\"password\" autocomplete=\"off\" required maxlength=\"256\"> "
      "<button type=\"submit\">Sign in</button></form></main></body></html>\n");
  return out;
}

std::string RenderErrorPage(int status, absl::string_view title,
                            absl::string_view message,
                            const core::FieldViolations& violations,
                            bool sign_in) {
  std::string out = Head(title);
  absl::StrAppend(&out,
                  "<body><header><span class=\"brand\">placement</span>"
                  "</header><main id=\"error\" data-status=\"",
                  status, "\"><h1>", Esc(title), "</h1><p class=\"error\">",
                  Esc(message), "</p>");
  if (!violations.empty()) {
    absl::StrAppend(&out, "<ul class=\"violations\">");
    for (const core::FieldViolation& v : violations) {
      absl::StrAppend(&out, "<li data-param=\"", Esc(v.field), "\"><code>",
                      Esc(v.field), "</code> ", Esc(v.description), "</li>");
    }
    absl::StrAppend(&out, "</ul>");
  }
  if (sign_in) {
    absl::StrAppend(&out, "<p><a href=\"/login\">Sign in</a></p>");
  } else {
    absl::StrAppend(&out, "<p><a href=\"/\">Back to the console</a></p>");
  }
  absl::StrAppend(&out, "</main></body></html>\n");
  return out;
}

}  // namespace placement::services::console
