"""Connecting to a Ray cluster (the optional ``ray`` extra): ``--ray ADDRESS|auto|local:N``.

* ``local:N``: a throw-away cluster of N nodes on this machine
  (``ray.cluster_utils.Cluster``: one head and N - 1 worker nodes, each with its own
  raylet and object store, all on 127.0.0.1), torn down when the work ends, also
  on Ctrl-C or an error;
* ``auto``: the cluster this machine belongs to (``ray start`` ran here);
* ``HOST:PORT`` or ``ray://HOST:PORT``: that cluster's head (``docs/ray.md``).

Nothing reaches out: no dashboard, no usage statistics, and a local cluster binds
127.0.0.1 only. Work is submitted under the namespace ``ggp`` so ``ray status`` and
``ray list actors`` show it; a driver that stops takes its actors and tasks with it
(none is detached).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from solvers.errors import GameError

NAMESPACE = "ggp"
LOOPBACK = "127.0.0.1"
#: a local cluster's nodes are small: this machine's cores and memory are shared
LOCAL_NODE_CPUS = 1
LOCAL_OBJECT_STORE_BYTES = 150 * 2**20
MAX_LOCAL_NODES = 16
SINGLE_MACHINE = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


def ray_module(loopback: bool = False) -> Any:
    """The ``ray`` package, or a one-line error saying how to get it.

    ``loopback``: this process and the nodes it starts use 127.0.0.1 only. Ray turns
    a 127.0.0.1 address into the machine's outward address unless its single-machine
    mode is on (the variable Ray reads on import, and its constant once imported)."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if loopback:
        os.environ[SINGLE_MACHINE] = "0"
    try:  # deferred: Ray, optional (pip install 'ggp-solve[ray]'), after the variables above
        import ray
        from ray._private import ray_constants
    except ImportError:
        raise GameError("--ray needs Ray: pip install 'ggp-solve[ray]'") from None
    if loopback:
        ray_constants.ENABLE_RAY_CLUSTER = False
    return ray


def local_nodes(address: str) -> int | None:
    """N for ``local:N``, None for any other address (a bad N is an error)."""
    match = re.fullmatch(r"local:(\d+)", address)
    if address.startswith("local") and match is None:
        raise GameError(f"--ray {address!r}: write local:N with N the number of nodes")
    if match is None:
        return None
    n = int(match.group(1))
    if not 1 <= n <= MAX_LOCAL_NODES:
        raise GameError(f"--ray {address}: a local cluster has 1 to {MAX_LOCAL_NODES} nodes")
    return n


def node_args(**extra: Any) -> dict[str, Any]:
    """A local node's settings: loopback, small, no dashboard."""
    return {"num_cpus": LOCAL_NODE_CPUS, "node_ip_address": LOOPBACK,
            "object_store_memory": LOCAL_OBJECT_STORE_BYTES, "include_dashboard": False,
            **extra}


@dataclass
class Connection:
    """A driver's connection; ``cluster`` is the local test cluster when it made one."""

    address: str
    cluster: Any = None

    def nodes(self) -> list[dict[str, Any]]:
        """The live nodes (``ray.nodes()`` rows)."""
        return [n for n in ray_module().nodes() if n.get("Alive")]


@contextlib.contextmanager
def connect(address: str) -> Iterator[Connection]:
    """Connect the driver to ``address`` (see the module docstring), and disconnect,
    stopping a local cluster, however the block ends."""
    n = local_nodes(address)
    ray = ray_module(loopback=n is not None or address.startswith(LOOPBACK))
    if n is None:
        _probe(address)
    cluster = None
    try:
        if n is not None:
            from ray.cluster_utils import Cluster  # deferred: Ray, optional

            # its INFO lines (the address file it rewrites) are not ours to show
            logging.getLogger("ray").setLevel(logging.WARNING)

            cluster = Cluster(initialize_head=True, head_node_args=node_args())
            for _ in range(n - 1):
                cluster.add_node(**node_args())
            target = cluster.address
        else:
            target = address
        try:
            ray.init(address=target, namespace=NAMESPACE, _node_ip_address=LOOPBACK
                     if target.startswith(LOOPBACK) else None,
                     include_dashboard=False, logging_level="warning",
                     configure_logging=True, log_to_driver=False)
        except (ConnectionError, ValueError, RuntimeError) as exc:
            raise GameError(f"cannot reach the Ray cluster at {address}: "
                            f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
                            ) from None
        if cluster is not None:
            cluster.wait_for_nodes()
        yield Connection(address, cluster)
    finally:
        with contextlib.suppress(Exception):
            ray.shutdown()
        if cluster is not None:
            with contextlib.suppress(Exception):
                cluster.shutdown()


def _probe(address: str, seconds: float = 5.0) -> None:
    """A head's ``HOST:PORT`` must answer at once: Ray itself retries for minutes."""
    match = re.fullmatch(r"(?:ray://)?\[?([^\]]+?)\]?:(\d+)", address)
    if match is None:
        return  # auto, or a form Ray checks itself
    try:
        with socket.create_connection((match.group(1), int(match.group(2))), timeout=seconds):
            pass
    except OSError as exc:
        raise GameError(f"cannot reach the Ray cluster at {address}: "
                        f"{exc.strerror or type(exc).__name__}") from None


def node_label() -> str:
    """This worker's node as errors name it: ``IP (node id prefix)``."""
    ray = ray_module()
    context = ray.get_runtime_context()
    return f"{ray.util.get_node_ip_address()} (node {context.get_node_id()[:12]})"
