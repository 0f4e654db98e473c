#include "services/cost_service.h"
