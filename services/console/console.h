#ifndef PLACEMENT_SERVICES_CONSOLE_CONSOLE_H_
#define PLACEMENT_SERVICES_CONSOLE_CONSOLE_H_

// The console's request handling, between the HTTP server (http/) and the
// pages: route, sign-in, the token and its role, the page's parameters, then
// the page's reads and rendering on a database worker, within a deadline
// and a bound on pages in flight. No request is logged (a URL or a header
// may carry what a token-holder would not want kept), and an unknown path
// is answered from constants.

#include <atomic>
#include <functional>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "services/auth/token_directory.h"
#include "services/console/access.h"
#include "services/console/http/http_message.h"
#include "services/console/http/query.h"
#include "services/console/pages.h"
#include "services/console/routes.h"
#include "services/metrics/console_metrics.h"
#include "services/plan/evidence_cache.h"
#include "storage/session/db_session.h"

namespace placement::services::console {

struct ConsoleLimits {
  // Pages being read and rendered at once; beyond them, 503 (each holds a
  // database worker the API shares).
  int max_pages_in_flight = 4;
  // A page not started by then is answered 503 instead.
  absl::Duration page_deadline = absl::Seconds(10);
};

// Where the console's pages get their data: a database worker (false when
// the queue is full), the replica's snapshot (null before the first read),
// the tokens. Fakes stand in for them in tests.
struct ConsoleBackend {
  std::function<bool(std::function<void(storage::DbSession&)>)> submit;
  std::function<std::shared_ptr<const CatalogSnapshot>()> snapshot;
  const TokenDirectory* tokens = nullptr;
  bool auth_enabled = true;
  std::function<absl::Time()> now;  // absl::Now when null
  // As ServerOptions::pool_state_max_age: what PlacePlan counts a pool's
  // reported queue stale after (the standards page re-plans as it does).
  absl::Duration pool_state_max_age = absl::Minutes(10);
};

class Console {
 public:
  using Respond = std::function<void(HttpResponse)>;

  // `metrics` may be null.
  Console(ConsoleBackend backend, ConsoleLimits limits,
          ConsoleMetrics* metrics);

  // Answers `request` through `respond`, at once or later from a database
  // worker. `respond` is called exactly once.
  void Handle(const HttpRequest& request, Respond respond);

  // From now on no page is sent to a database worker (503); pages already
  // sent still answer. Call before the workers stop.
  void Stop();

  int pages_in_flight() const { return in_flight_.load(); }

 private:
  // Answers and counts.
  void Answer(const Respond& respond, const char* label, absl::Time started,
              HttpResponse response);
  // A page of data: the viewer's token and role, its parameters, then the
  // read on a worker.
  void HandlePage(const HttpRequest& request, const Route& route,
                  const RequestTarget& target, absl::Time started,
                  const Respond& respond);
  void HandleLogin(const HttpRequest& request, absl::Time started,
                   const Respond& respond);
  // A page admitted, for a database worker.
  struct PageJob {
    PageId page;
    Viewer viewer;
    PageWork work;
    std::shared_ptr<const CatalogSnapshot> snapshot;
    absl::Time deadline;  // not started by then: 503
  };
  // Reads and renders `job` on `session` (its Server-Timing set).
  HttpResponse RunPage(storage::DbSession& session, const char* label,
                       const PageJob& job);

  const ConsoleBackend backend_;
  const ConsoleLimits limits_;
  ConsoleMetrics* const metrics_;
  std::atomic<int> in_flight_{0};
  absl::Mutex mu_;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace placement::services::console

#endif  // PLACEMENT_SERVICES_CONSOLE_CONSOLE_H_
