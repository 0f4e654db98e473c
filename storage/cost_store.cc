#include "storage/cost_store.h"
