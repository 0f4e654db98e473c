#ifndef PLACEMENT_TESTS_SUPPORT_PRIVATE_CLUSTER_H_
#define PLACEMENT_TESTS_SUPPORT_PRIVATE_CLUSTER_H_

#include <string>

namespace placement::testing {

// A PostgreSQL cluster of the test's own (scripts/pg), which the test may
// stop and start at will; removed by the destructor.
class PrivateCluster {
 public:
  PrivateCluster();
  ~PrivateCluster();

  // scripts/pg COMMAND on this cluster (start, stop, ...) with an optional
  // mode (fast, immediate); returns the exit code.
  int Run(const std::string& command, std::string* output = nullptr,
          const std::string& mode = "");

  // The admin URL (its "postgres" database); empty if it did not start.
  const std::string& url() const { return url_; }

 private:
  std::string dir_;
  std::string url_;
};

}  // namespace placement::testing

#endif  // PLACEMENT_TESTS_SUPPORT_PRIVATE_CLUSTER_H_
