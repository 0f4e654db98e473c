"""One placementd on its own fresh database, reached only through the
public gRPC API: pools, plans and run uploads, as a platform team's tooling
would call them."""

import hashlib
import uuid

import grpc
from google.protobuf import duration_pb2  # noqa: F401  (stub dependency)

from placement.v1 import catalog_pb2
from placement.v1 import catalog_pb2_grpc
from placement.v1 import placement_pb2
from placement.v1 import placement_pb2_grpc
from placement.v1 import telemetry_pb2
from placement.v1 import telemetry_pb2_grpc

from placementd_launcher import Placementd

MICROS = 1_000_000
TIMEOUT_S = 30
_FABRIC = {"nvlink": catalog_pb2.FABRIC_NVLINK, "pcie": catalog_pb2.FABRIC_PCIE}
_INTER_NODE = {
    "none": catalog_pb2.INTER_NODE_FABRIC_NONE,
    "ethernet": catalog_pb2.INTER_NODE_FABRIC_ETHERNET,
    "roce": catalog_pb2.INTER_NODE_FABRIC_ROCE,
    "infiniband": catalog_pb2.INTER_NODE_FABRIC_INFINIBAND,
}
_OBJECTIVE = {"cost": placement_pb2.OBJECTIVE_LOWEST_COST,
              "time": placement_pb2.OBJECTIVE_SHORTEST_TIME}


class Service:
    """A started placementd with an admin token; stop() drops everything."""

    def __init__(self, name):
        self.daemon = Placementd(name, auth=True)
        self.evidence_version = 0

    def __enter__(self):
        self.daemon.start()
        channel = self.daemon.channel
        self.metadata = (("authorization", "Bearer " + self.daemon.token),)
        self.catalog = catalog_pb2_grpc.CatalogServiceStub(channel)
        self.placement = placement_pb2_grpc.PlacementServiceStub(channel)
        self.telemetry = telemetry_pb2_grpc.TelemetryServiceStub(channel)
        return self

    def __exit__(self, *exc):
        self.daemon.stop()

    def create_pools(self, pools):
        for p in pools:
            pool = catalog_pb2.Pool(
                name=p["name"], sku=p["sku"], node_count=p["nodes"],
                gpus_per_node=p["gpus_per_node"], fabric=_FABRIC[p["fabric"]],
                purpose=catalog_pb2.POOL_PURPOSE_TRAINING, exclusive=True,
                gpu_quota=p["nodes"] * p["gpus_per_node"],
                internal_rate_micros_per_gpu_hour=round(
                    p["rate_per_gpu_hour"] * MICROS))
            if "list_price_per_gpu_hour" in p:
                pool.list_price_micros_per_gpu_hour = round(
                    p["list_price_per_gpu_hour"] * MICROS)
            if "inter_node_fabric" in p:
                pool.inter_node_fabric = _INTER_NODE[p["inter_node_fabric"]]
            if "inter_node_gb_s" in p:
                pool.inter_node_bandwidth_gb_s_per_gpu = p["inter_node_gb_s"]
            self.catalog.CreatePool(catalog_pb2.CreatePoolRequest(pool=pool),
                                    timeout=TIMEOUT_S, metadata=self.metadata)

    def sku_memory_gb(self, sku):
        reply = self.catalog.GetSku(catalog_pb2.GetSkuRequest(name=sku),
                                    timeout=TIMEOUT_S, metadata=self.metadata)
        return reply.sku.memory_gb

    def plan(self, job):
        request = placement_pb2.PlacePlanRequest(
            recipe=job.recipe, total_steps=job.steps, team=job.team,
            min_evidence_version=self.evidence_version,
            constraints=placement_pb2.PlanConstraints(
                objective=_OBJECTIVE[job.objective]))
        return self.placement.PlacePlan(request, timeout=TIMEOUT_S,
                                        metadata=self.metadata)

    def upload(self, record, epoch_s, plan_id, team, run_name):
        """Uploads one run record (execution.RunRecord) as an agent would,
        its times on the replay's clock from `epoch_s` (seconds since the
        Unix epoch), its id derived from `run_name`. Returns False when the
        service refuses it as invalid (INVALID_ARGUMENT), as an agent's
        rejected/ would keep it; any other error raises."""
        run_id = str(uuid.UUID(bytes=hashlib.sha256(
            run_name.encode()).digest()[:16], version=4))
        run = record.message(epoch_s, plan_id, team, run_id)
        try:
            reply = self.telemetry.UploadBenchmarkRun(
                telemetry_pb2.UploadBenchmarkRunRequest(run=run),
                timeout=TIMEOUT_S, metadata=self.metadata)
        except grpc.RpcError as e:
            if e.code() == grpc.StatusCode.INVALID_ARGUMENT:
                return False
            raise
        self.evidence_version = max(self.evidence_version,
                                    reply.evidence_version)
        return True
