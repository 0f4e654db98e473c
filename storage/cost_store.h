#ifndef PLACEMENT_STORAGE_COST_STORE_H_
#define PLACEMENT_STORAGE_COST_STORE_H_

namespace placement::storage {}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_COST_STORE_H_
