#ifndef PLACEMENT_CLIENTS_PLACECTL_PLAN_FLAGS_H_
#define PLACEMENT_CLIENTS_PLACECTL_PLAN_FLAGS_H_

#include "placement/v1/placement.pb.h"

namespace placement::placectl {

// The PlacePlanRequest of `placectl plan`: --recipe's file (when given),
// then every recipe, constraint and serving flag given on the command line
// over it; empty constraints and serving left unset. Returns false, after
// printing why, on an unreadable file or a malformed flag (a usage error).
bool PlanRequestFromFlags(v1::PlacePlanRequest* request);

}  // namespace placement::placectl

#endif  // PLACEMENT_CLIENTS_PLACECTL_PLAN_FLAGS_H_
