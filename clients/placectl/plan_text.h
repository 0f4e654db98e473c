#ifndef PLACEMENT_CLIENTS_PLACECTL_PLAN_TEXT_H_
#define PLACEMENT_CLIENTS_PLACECTL_PLAN_TEXT_H_

#include <ostream>

#include "placement/v1/placement.pb.h"

namespace placement::placectl {

// A plan for people: its header (id, recipe key, steps, objective, settings,
// predicted memory), the ranked candidates with what their cost is made of
// (start-up, steps, rework from the pool's failure rate), their reasons and
// warnings, the rejected pools, the bake-off or measurement run (each run's
// steps, cost, expected saving and chance of beating the first choice), the
// eval requirement and the plan's warnings.
void PrintPlan(const v1::PlacePlanRequest& request,
               const v1::PlacePlanResponse& plan, std::ostream& out);

// What a recorded plan was asked: team, request id, constraints, serving,
// and the recipe as asked.
void PrintRequest(const v1::PlacePlanRequest& request, std::ostream& out);

}  // namespace placement::placectl

#endif  // PLACEMENT_CLIENTS_PLACECTL_PLAN_TEXT_H_
