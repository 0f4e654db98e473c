#ifndef PLACEMENT_SERVICES_API_RECIPE_CONVERT_H_
#define PLACEMENT_SERVICES_API_RECIPE_CONVERT_H_

#include "core/evidence/evidence.h"
#include "core/recipe.h"
#include "placement/v1/recipe.pb.h"
#include "placement/v1/telemetry.pb.h"

namespace placement::services {

// placement.v1.Recipe <-> core::Recipe, field for field. Enum values map one
// to one (UNSPECIFIED stays unspecified for validation to report).
core::Recipe RecipeFromProto(const v1::Recipe& recipe);
v1::Recipe RecipeToProto(const core::Recipe& recipe);

core::Precision PrecisionFromProto(v1::Precision precision);
v1::Precision PrecisionToProto(core::Precision precision);
v1::FineTuneMethod MethodToProto(core::FineTuneMethod method);
core::FineTuneMethod MethodFromProto(v1::FineTuneMethod method);

core::Offload OffloadFromProto(v1::Offload offload);
v1::Offload OffloadToProto(core::Offload offload);
core::Interconnect InterconnectFromProto(v1::Interconnect interconnect);
v1::Interconnect InterconnectToProto(core::Interconnect interconnect);
core::RunOutcome OutcomeFromProto(v1::RunOutcome outcome);
v1::RunOutcome OutcomeToProto(core::RunOutcome outcome);
core::PeakMemoryKind PeakMemoryKindFromProto(v1::PeakMemoryKind kind);
v1::PeakMemoryKind PeakMemoryKindToProto(core::PeakMemoryKind kind);

// Which peak a run's peak_memory_gb is: its peak_memory_kind, else its
// recipe's reported_peak (unspecified when neither says: read as
// DEVICE_USED).
core::PeakMemoryKind RunPeakMemoryKind(const v1::BenchmarkRun& run);

// The recipe of an uploaded run, its reported_peak the run's
// peak_memory_kind (RunPeakMemoryKind), so that the stored recipe says
// which peak its runs report.
core::Recipe RunRecipeFromProto(const v1::BenchmarkRun& run);

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_API_RECIPE_CONVERT_H_
