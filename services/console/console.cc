#include "services/console/console.h"

#include <iostream>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/civil_time.h"
#include "absl/time/clock.h"
#include "core/field_violation.h"
#include "services/console/access.h"
#include "services/console/embedded_assets.h"
#include "services/console/pages.h"
#include "services/console/render/layout.h"

namespace placement::services::console {
namespace {

// The longest token the sign-in form takes (a token is 47 characters).
constexpr size_t kMaxFormTokenLength = 256;

HttpResponse ErrorPage(int status, absl::string_view title,
                       absl::string_view message,
                       const core::FieldViolations& violations = {},
                       bool sign_in = false) {
  HttpResponse response;
  response.status = status;
  response.body = RenderErrorPage(status, title, message, violations, sign_in);
  return response;
}

// Every unknown path gets this same answer, built once.
const HttpResponse& NotFound() {
  static const HttpResponse* const response = new HttpResponse(
      ErrorPage(404, "Not found", "The console has no page at this path."));
  return *response;
}

HttpResponse BadRequest(const absl::Status& status) {
  return ErrorPage(400, "Bad request",
                   "The request's parameters are refused; nothing was read.",
                   core::ViolationsFromStatus(status));
}

HttpResponse Unavailable(absl::string_view why) {
  HttpResponse response = ErrorPage(503, "Busy", why);
  response.headers.emplace_back("Retry-After", "1");
  return response;
}

HttpResponse Unauthenticated(absl::string_view why) {
  HttpResponse response = ErrorPage(401, "Sign in", why, {}, /*sign_in=*/true);
  response.headers.emplace_back("WWW-Authenticate",
                                "Bearer realm=\"placement console\"");
  return response;
}

HttpResponse Redirect(absl::string_view location) {
  HttpResponse response;
  response.status = 303;
  response.headers.emplace_back("Location", std::string(location));
  return response;
}

HttpResponse MethodNotAllowed(absl::string_view allow) {
  HttpResponse response =
      ErrorPage(405, "Method not allowed",
                absl::StrCat("This path answers ", allow, " only."));
  response.headers.emplace_back("Allow", std::string(allow));
  return response;
}

// A page's work that failed, as an answer.
HttpResponse PageError(const char* label, const absl::Status& status) {
  if (absl::IsNotFound(status)) {
    return ErrorPage(404, "Not found", status.message());
  }
  if (absl::IsPermissionDenied(status)) {
    // A plan of a team the token is not bound to (team_access.h).
    return ErrorPage(403, "Not for your teams", status.message());
  }
  if (absl::IsInvalidArgument(status)) {
    core::FieldViolations violations = core::ViolationsFromStatus(status);
    return ErrorPage(400, "Bad request",
                     violations.empty()
                         ? std::string(status.message())
                         : "The request's parameters are refused.",
                     violations);
  }
  if (absl::IsUnavailable(status) || absl::IsResourceExhausted(status) ||
      absl::IsDeadlineExceeded(status)) {
    return Unavailable(status.message());
  }
  // The path's label and the status only: never the request itself.
  std::cerr << "placementd: console page " << label << ": " << status << "\n";
  return ErrorPage(500, "Internal error", "The page could not be read.");
}

// A cross-site form must not sign a browser in or out: a POST must come
// from a page of the console's own origin (browsers send Origin on POST).
bool SameOrigin(const HttpRequest& request) {
  if (request.origin.empty()) return true;  // not a browser's cross-site POST
  return request.origin == absl::StrCat("http://", request.host) ||
         request.origin == absl::StrCat("https://", request.host);
}

HttpResponse Asset(absl::string_view path) {
  for (const EmbeddedAsset& asset : EmbeddedAssets()) {
    if (path == asset.path) {
      HttpResponse response;
      response.content_type = asset.content_type;
      response.body = std::string(asset.body);
      response.cacheable = true;
      return response;
    }
  }
  return NotFound();
}

// The pages `viewer` may open, in navigation order.
std::vector<const Route*> NavFor(const Viewer& viewer) {
  std::vector<const Route*> nav;
  for (const Route& route : Routes()) {
    if (route.kind == RouteKind::kPage && *route.nav_title != '\0' &&
        viewer.MayRead(route.reads_as)) {
      nav.push_back(&route);
    }
  }
  return nav;
}

}  // namespace

Console::Console(ConsoleBackend backend, ConsoleLimits limits,
                 ConsoleMetrics* metrics)
    : backend_(std::move(backend)), limits_(limits), metrics_(metrics) {}

void Console::Stop() {
  absl::MutexLock lock(&mu_);
  stopped_ = true;
}

void Console::Answer(const Respond& respond, const char* label,
                     absl::Time started, HttpResponse response) {
  const absl::Time now = backend_.now ? backend_.now() : absl::Now();
  if (metrics_ != nullptr)
    metrics_->Answered(label, response.status, now - started);
  respond(std::move(response));
}

void Console::Handle(const HttpRequest& request, Respond respond) {
  const absl::Time started = backend_.now ? backend_.now() : absl::Now();
  absl::StatusOr<RequestTarget> target = ParseTarget(request.target);
  const std::string path =
      target.ok() ? target->path
                  : request.target.substr(0, request.target.find('?'));
  const Route* route = FindRoute(path);
  if (route == nullptr) {
    Answer(respond, kUnknownLabel, started, NotFound());
    return;
  }
  if (!target.ok()) {
    Answer(respond, route->label, started, BadRequest(target.status()));
    return;
  }
  const bool get = request.method == "GET";
  const bool post = request.method == "POST";
  switch (route->kind) {
    case RouteKind::kAsset: {
      if (!get)
        return Answer(respond, route->label, started, MethodNotAllowed("GET"));
      absl::Status no_params = PageQuery(target->params, {}).Finish();
      Answer(respond, route->label, started,
             no_params.ok() ? Asset(path) : BadRequest(no_params));
      return;
    }
    case RouteKind::kLogin:
      if (get) {
        HttpResponse response;
        response.body = RenderLoginPage("");
        return Answer(respond, route->label, started, std::move(response));
      }
      if (!post)
        return Answer(respond, route->label, started,
                      MethodNotAllowed("GET, POST"));
      return HandleLogin(request, started, respond);
    case RouteKind::kLogout: {
      if (!post)
        return Answer(respond, route->label, started, MethodNotAllowed("POST"));
      if (!SameOrigin(request)) {
        return Answer(respond, route->label, started,
                      ErrorPage(403, "Refused", "Cross-origin sign-out."));
      }
      HttpResponse response = Redirect("/login");
      response.headers.emplace_back("Set-Cookie", ClearedSessionCookie());
      return Answer(respond, route->label, started, std::move(response));
    }
    case RouteKind::kHome: {
      if (!get)
        return Answer(respond, route->label, started, MethodNotAllowed("GET"));
      absl::StatusOr<Viewer> viewer = Authenticate(
          PresentedToken(request), *backend_.tokens, backend_.auth_enabled);
      if (!viewer.ok()) {
        return Answer(respond, route->label, started, Redirect("/login"));
      }
      std::vector<const Route*> nav = NavFor(*viewer);
      return Answer(respond, route->label, started,
                    nav.empty() ? ErrorPage(403, "Nothing to show",
                                            "Your role reads no page of the "
                                            "console.")
                                : Redirect(nav.front()->path));
    }
    case RouteKind::kPage:
      if (!get)
        return Answer(respond, route->label, started, MethodNotAllowed("GET"));
      return HandlePage(request, *route, *target, started, respond);
  }
}

void Console::HandleLogin(const HttpRequest& request, absl::Time started,
                          const Respond& respond) {
  if (!SameOrigin(request)) {
    return Answer(respond, "login", started,
                  ErrorPage(403, "Refused", "Cross-origin sign-in."));
  }
  if (!absl::StartsWith(request.content_type,
                        "application/x-www-form-urlencoded")) {
    return Answer(
        respond, "login", started,
        ErrorPage(415, "Unsupported form", "Sign in with the form at /login."));
  }
  absl::StatusOr<std::string> token =
      FormValue(request.body, "token", kMaxFormTokenLength);
  if (!token.ok())
    return Answer(respond, "login", started, BadRequest(token.status()));
  absl::StatusOr<Viewer> viewer =
      Authenticate(*token, *backend_.tokens, /*auth_enabled=*/true);
  if (!viewer.ok()) {
    if (absl::IsUnavailable(viewer.status())) {
      return Answer(respond, "login", started,
                    Unavailable(viewer.status().message()));
    }
    HttpResponse response;
    response.status = 401;
    response.body = RenderLoginPage("Unknown or revoked token.");
    return Answer(respond, "login", started, std::move(response));
  }
  HttpResponse response = Redirect("/");
  response.headers.emplace_back("Set-Cookie", SessionCookie(*token));
  Answer(respond, "login", started, std::move(response));
}

HttpResponse Console::RunPage(storage::DbSession& session, const char* label,
                              const PageJob& job) {
  const absl::Time began = backend_.now ? backend_.now() : absl::Now();
  if (began > job.deadline) {
    return Unavailable("the page waited too long for the database");
  }
  PageFrame frame;
  frame.page = job.page;
  frame.viewer = job.viewer.Describe();
  frame.nav = NavFor(job.viewer);
  frame.rendered_at = began;
  frame.snapshot_time = job.snapshot->loaded_at;
  const ReadContext context{session,    *job.snapshot,
                            job.viewer, &frame,
                            began,      backend_.pool_state_max_age};
  absl::StatusOr<HttpResponse> page;
  try {
    page = job.work(context);
  } catch (const std::exception& e) {
    page = absl::InternalError(e.what());
  }
  HttpResponse response =
      page.ok() ? *std::move(page) : PageError(label, page.status());
  const absl::Time done = backend_.now ? backend_.now() : absl::Now();
  // What the page cost the server, for the browser's tools and the bench.
  response.headers.emplace_back(
      "Server-Timing",
      absl::StrCat("page;dur=", absl::ToDoubleMilliseconds(done - began)));
  return response;
}

void Console::HandlePage(const HttpRequest& request, const Route& route,
                         const RequestTarget& target, absl::Time started,
                         const Respond& respond) {
  const char* label = route.label;
  absl::StatusOr<Viewer> viewer = Authenticate(
      PresentedToken(request), *backend_.tokens, backend_.auth_enabled);
  if (!viewer.ok()) {
    return Answer(respond, label, started,
                  absl::IsUnauthenticated(viewer.status())
                      ? Unauthenticated(viewer.status().message())
                      : Unavailable(viewer.status().message()));
  }
  if (!viewer->MayRead(route.reads_as)) {
    return Answer(respond, label, started,
                  ErrorPage(403, "Not for your role",
                            absl::StrCat("This page shows what ",
                                         MethodShortName(route.reads_as),
                                         " answers, which the role table "
                                         "(docs/SECURITY.md) does not open to ",
                                         viewer->Describe(), ".")));
  }
  const absl::Time now = backend_.now ? backend_.now() : absl::Now();
  absl::StatusOr<PageWork> work = PreparePage(
      route.page, target.params, absl::ToCivilDay(now, absl::UTCTimeZone()));
  if (!work.ok())
    return Answer(respond, label, started, BadRequest(work.status()));
  std::shared_ptr<const CatalogSnapshot> snapshot = backend_.snapshot();
  if (snapshot == nullptr) {
    return Answer(respond, label, started,
                  Unavailable("pools and evidence are not loaded yet"));
  }
  if (in_flight_.fetch_add(1) >= limits_.max_pages_in_flight) {
    in_flight_.fetch_sub(1);
    return Answer(respond, label, started,
                  Unavailable("the console is rendering as many pages as it "
                              "may at once; retry"));
  }
  auto task = [this, label, started, respond,
               job = PageJob{route.page, *std::move(viewer), *std::move(work),
                             std::move(snapshot), now + limits_.page_deadline}](
                  storage::DbSession& session) {
    HttpResponse response = RunPage(session, label, job);
    in_flight_.fetch_sub(1);
    Answer(respond, label, started, std::move(response));
  };
  bool submitted = false;
  {
    absl::MutexLock lock(&mu_);
    if (!stopped_) submitted = backend_.submit(std::move(task));
  }
  if (!submitted) {
    in_flight_.fetch_sub(1);
    Answer(respond, label, started,
           Unavailable("the database work queue is full or stopping"));
  }
}

}  // namespace placement::services::console
