#ifndef PLACEMENT_SERVICES_API_CATALOG_CONVERT_H_
#define PLACEMENT_SERVICES_API_CATALOG_CONVERT_H_

#include "absl/time/time.h"
#include "core/pool.h"
#include "core/sku.h"
#include "placement/v1/catalog.pb.h"

namespace placement::services {

v1::Sku SkuToProto(const core::GpuSku& sku);
// A stored pool with the times storage recorded for it.
v1::Pool PoolToProto(const core::Pool& pool, absl::Time create_time,
                     absl::Time update_time);

// Copies the client-settable fields; the SKU name is taken as given (the
// caller resolves it against the catalog).
core::Pool PoolFromProto(const v1::Pool& pool);

core::Fabric FabricFromProto(v1::Fabric fabric);
v1::Fabric FabricToProto(core::Fabric fabric);
core::InterNodeFabric InterNodeFabricFromProto(v1::InterNodeFabric fabric);
v1::InterNodeFabric InterNodeFabricToProto(core::InterNodeFabric fabric);
core::PoolPurpose PurposeFromProto(v1::PoolPurpose purpose);
v1::PoolPurpose PurposeToProto(core::PoolPurpose purpose);

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_API_CATALOG_CONVERT_H_
