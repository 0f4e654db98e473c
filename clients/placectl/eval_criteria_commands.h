#ifndef PLACEMENT_CLIENTS_PLACECTL_EVAL_CRITERIA_COMMANDS_H_
#define PLACEMENT_CLIENTS_PLACECTL_EVAL_CRITERIA_COMMANDS_H_

#include <string>
#include <vector>

namespace placement::placectl {

// `placectl eval-criteria list | set NAME (--pool P | --label K=V) --metric M
// [--min_score X] [--max_score Y] | delete NAME` (set and delete: admin).
int RunEvalCriteria(const std::vector<std::string>& args);

}  // namespace placement::placectl

#endif  // PLACEMENT_CLIENTS_PLACECTL_EVAL_CRITERIA_COMMANDS_H_
