#ifndef PLACEMENT_TESTS_SUPPORT_METRICS_SCRAPE_H_
#define PLACEMENT_TESTS_SUPPORT_METRICS_SCRAPE_H_

#include <string>

namespace placement::testing {

// GET /metrics from 127.0.0.1:`port` over a plain socket: the whole HTTP
// response, or "" when the server does not answer (a connection a stopping
// server accepted but will not serve is given up after a second).
std::string ScrapeMetrics(int port);

}  // namespace placement::testing

#endif  // PLACEMENT_TESTS_SUPPORT_METRICS_SCRAPE_H_
