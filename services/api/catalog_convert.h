#ifndef PLACEMENT_SERVICES_API_CATALOG_CONVERT_H_
#define PLACEMENT_SERVICES_API_CATALOG_CONVERT_H_

#include "absl/time/time.h"
#include "core/pool.h"
#include "core/sku.h"
#include "google/protobuf/timestamp.pb.h"
#include "placement/v1/catalog.pb.h"
#include "storage/pool_store.h"

namespace placement::services {

v1::Sku SkuToProto(const core::GpuSku& sku);
v1::Pool PoolToProto(const storage::PoolRecord& record);

// Copies the client-settable fields; the SKU name is taken as given (the
// caller resolves it against the catalog).
core::Pool PoolFromProto(const v1::Pool& pool);

core::Fabric FabricFromProto(v1::Fabric fabric);
v1::Fabric FabricToProto(core::Fabric fabric);
core::PoolPurpose PurposeFromProto(v1::PoolPurpose purpose);
v1::PoolPurpose PurposeToProto(core::PoolPurpose purpose);

void TimeToProto(absl::Time time, google::protobuf::Timestamp* out);
absl::Time TimeFromProto(const google::protobuf::Timestamp& timestamp);

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_API_CATALOG_CONVERT_H_
