#include "services/console/routes.h"

#include "services/console/access.h"

namespace placement::services::console {

const std::vector<Route>& Routes() {
  static const auto* const routes = new std::vector<Route>{
      {RouteKind::kPage, "/pools", "pools", PageId::kPools,
       reads_as::kListPools, "Pools"},
      {RouteKind::kPage, "/pool", "pool", PageId::kPool, reads_as::kGetPool},
      {RouteKind::kPage, "/plans", "plans", PageId::kPlans, reads_as::kGetPlan,
       "Plans"},
      {RouteKind::kPage, "/plan", "plan", PageId::kPlan, reads_as::kGetPlan},
      {RouteKind::kPage, "/accuracy", "accuracy", PageId::kAccuracy,
       reads_as::kGetPlanAccuracy, "Accuracy"},
      {RouteKind::kPage, "/cost", "cost", PageId::kCost,
       reads_as::kGetCostReport, "Cost"},
      {RouteKind::kPage, "/cost.csv", "cost_csv", PageId::kCostCsv,
       reads_as::kGetCostReport},
      {RouteKind::kPage, "/standards", "standards", PageId::kStandards,
       reads_as::kListStandards, "Standards"},
      {RouteKind::kHome, "/", "home"},
      {RouteKind::kLogin, "/login", "login"},
      {RouteKind::kLogout, "/logout", "logout"},
      {RouteKind::kAsset, "/assets/console.css", "asset"},
      {RouteKind::kAsset, "/assets/console.js", "asset"},
      {RouteKind::kAsset, "/assets/favicon.svg", "asset"},
  };
  return *routes;
}

const Route* FindRoute(absl::string_view path) {
  for (const Route& route : Routes()) {
    if (path == route.path) return &route;
  }
  return nullptr;
}

const Route& RouteOf(PageId page) {
  for (const Route& route : Routes()) {
    if (route.kind == RouteKind::kPage && route.page == page) return route;
  }
  return Routes().front();  // unreachable: every page is in the table
}

}  // namespace placement::services::console
