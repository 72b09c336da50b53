"""A single-node Slurm on this machine, for tests, CI and trying ``--executor slurm`` without a cluster.

:func:`ensure_local_slurm` installs ``slurm-wlm`` and ``munge`` when missing (``apt-get``), makes fake GPU
character devices (``mknod``, major 195: no driver behind them, but Slurm hands them out as gres and sets
``CUDA_VISIBLE_DEVICES``), writes ``slurm.conf`` and ``gres.conf`` and starts munged, slurmctld and
``slurmd -N localhost`` without systemd. Idempotent: a controller that answers with the node up is reused;
a configuration it did not write is never overwritten. Every step is timed (:attr:`LocalSlurm.timings`).

Side effects (root only): packages, ``/dev/chemrobust-gpu<i>``, ``/etc/slurm/{slurm,gres}.conf``, daemons
left running after the caller ends (logs in ``/var/log/slurm{ctld,d}.log``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

Log = Callable[[str], None]

CONF_DIR = Path("/etc/slurm")
MARKER = "# written by leaderboard.cluster.local_slurm: a single-node test cluster"
GPU_DEVICE = "/dev/chemrobust-gpu{}"
#: The NVIDIA character-device major: what a GPU's device file has (Slurm only needs a device file).
NVIDIA_MAJOR = 195
PARTITION = "debug"
PACKAGES = {"slurmctld": "slurm-wlm", "munged": "munge"}
#: Where munged (Debian's munge package) writes its process id.
MUNGE_PIDFILE = Path("/run/munge/munged.pid")


class ServiceError(RuntimeError):
    """A service could not be installed or started; the message says which, and where its log is."""


@dataclass
class LocalSlurm:
    """What :func:`ensure_local_slurm` found or started.

    Attributes
    ----------
    partition : str
        The partition jobs go to.
    gpus : int
        Fake GPUs declared as gres on the node.
    reused : bool
        True when a running controller was reused.
    timings : dict of str to float
        Seconds per step (install, config, munge, slurmctld, slurmd, node up).
    started_munge : bool
        True when munged was not answering and was started here.
    """

    partition: str
    gpus: int
    reused: bool
    timings: dict[str, float] = field(default_factory=dict)
    started_munge: bool = False


def run_command(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    """Run ``cmd`` and return its outcome, output captured as text; never raises for a non-zero exit."""
    return subprocess.run(cmd, capture_output=True, text=True, check=False, **kwargs)


def install_missing(packages: dict[str, str], *, log: Log = print) -> list[str]:
    """``apt-get install`` the packages whose command is not found; return the packages installed.

    Parameters
    ----------
    packages : dict of str to str
        Command (looked up in ``PATH`` and ``/usr/sbin``) to the Debian package that provides it.
    log : callable
        Receives one line when something is installed.

    Raises
    ------
    ServiceError
        If ``apt-get`` fails (its last lines are in the message).
    """
    path = os.environ.get("PATH", "") + ":/usr/sbin:/sbin"
    missing = sorted({pkg for cmd, pkg in packages.items() if shutil.which(cmd, path=path) is None})
    if not missing:
        return []
    log(f"installing {' '.join(missing)} (apt-get)")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "--no-install-recommends",
                                                *missing]):  # fmt: skip
        done = run_command(cmd, env=env)
        if done.returncode != 0:
            tail = "\n".join((done.stdout + done.stderr).splitlines()[-10:])
            raise ServiceError(f"{' '.join(cmd)} failed:\n{tail}")
    return missing


def slurm_conf(*, cpus: int, memory_mb: int, gpus: int) -> str:
    """Return a minimal single-node ``slurm.conf``: no systemd, no cgroups, no accounting database.

    ``KillWait=10``: a cancelled job's script has ten seconds after SIGTERM to remove its container.
    ``MinJobAge=600``: ``scontrol show job`` still knows a job ten minutes after it ended (there is no
    ``sacct`` without slurmdbd).
    """
    gres = f" Gres=gpu:{gpus}" if gpus else ""
    return f"""{MARKER}
ClusterName=chemrobust
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
GresTypes=gpu
StateSaveLocation=/var/lib/slurm/slurmctld
SlurmdSpoolDir=/var/lib/slurm/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurmctld.log
SlurmdLogFile=/var/log/slurmd.log
ReturnToService=2
KillWait=10
MinJobAge=600
NodeName=localhost NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={memory_mb}{gres} State=UNKNOWN
PartitionName={PARTITION} Nodes=localhost Default=YES MaxTime=INFINITE State=UP
"""


def gres_conf(gpus: int) -> str:
    """Return ``gres.conf`` listing the fake GPU devices."""
    files = ",".join(GPU_DEVICE.format(i) for i in range(gpus))
    return f"{MARKER}\nNodeName=localhost Name=gpu File={files}\n" if gpus else f"{MARKER}\n"


def make_fake_gpus(gpus: int) -> list[Path]:
    """Create ``/dev/chemrobust-gpu<i>`` character devices (major 195, minor ``i``) where missing."""
    made = []
    for i in range(gpus):
        path = Path(GPU_DEVICE.format(i))
        if not path.exists():
            os.mknod(path, 0o666 | 0o020000, os.makedev(NVIDIA_MAJOR, i))
        made.append(path)
    return made


def _write_ours(path: Path, text: str) -> bool:
    """Write ``text`` to ``path`` unless a file we did not write is there; return whether it changed."""
    if path.exists():
        current = path.read_text()
        if MARKER not in current:
            raise ServiceError(
                f"{path} exists and was not written by leaderboard.cluster.local_slurm: this machine has a "
                "Slurm configuration of its own; use that cluster (README: 'Running on a cluster')"
            )
        if current == text:
            return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return True


def munge_works() -> bool:
    """Tell whether ``munge -n | unmunge`` round-trips a credential (munged is up, with a key)."""
    encoded = run_command(["munge", "-n"])
    return encoded.returncode == 0 and run_command(["unmunge"], input=encoded.stdout).returncode == 0


def node_state() -> str:
    """Return the node's state from ``sinfo`` (``idle``, ``mix``, ``down*`` …; empty: no answer)."""
    done = run_command(["sinfo", "-h", "-n", "localhost", "-o", "%t"], timeout=10)
    return done.stdout.strip() if done.returncode == 0 else ""


def _wait(check: Callable[[], bool], timeout_s: float, what: str, log_file: str) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    tail = ""
    if Path(log_file).is_file():
        tail = "\n".join(Path(log_file).read_text(errors="replace").splitlines()[-15:])
    raise ServiceError(f"{what} did not come up within {timeout_s:g} s; {log_file}:\n{tail}")


def ensure_local_slurm(*, gpus: int = 2, log: Log = print) -> LocalSlurm:
    """Install (when missing), configure and start a single-node Slurm with ``gpus`` fake GPUs.

    Parameters
    ----------
    gpus : int
        Fake GPUs declared as gres on the node.
    log : callable
        Receives what was done, with timings.

    Returns
    -------
    LocalSlurm
        Partition, GPU count, whether it was reused, timings.

    Raises
    ------
    ServiceError
        Not root; a foreign Slurm configuration; a daemon that does not come up (its log's last lines).
    """
    if os.geteuid() != 0:
        raise ServiceError("starting a local Slurm needs root (daemons, /etc/slurm, mknod)")
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    install_missing(PACKAGES, log=log)
    timings["install"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    make_fake_gpus(gpus)
    memory_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 1024**2
    # Leave the host some memory: Slurm refuses a node whose RealMemory exceeds what slurmd finds.
    text = slurm_conf(cpus=os.cpu_count() or 1, memory_mb=int(memory_mb * 0.9), gpus=gpus)
    changed = _write_ours(CONF_DIR / "slurm.conf", text)
    changed |= _write_ours(CONF_DIR / "gres.conf", gres_conf(gpus))
    timings["config"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    started_munge = not munge_works()
    if started_munge:
        Path("/run/munge").mkdir(parents=True, exist_ok=True)
        shutil.chown("/run/munge", "munge")
        started = run_command(["runuser", "-u", "munge", "--", "/usr/sbin/munged"])
        if started.returncode != 0:
            raise ServiceError(f"munged did not start: {started.stderr.strip()}")
        _wait(munge_works, 10, "munged", "/var/log/munge/munged.log")
    timings["munge"] = time.perf_counter() - t0

    reused = not changed and node_state().rstrip("*") in {"idle", "mix", "alloc", "comp"}
    if not reused:
        t0 = time.perf_counter()
        for daemon, pidfile in (("slurmd", "/run/slurmd.pid"), ("slurmctld", "/run/slurmctld.pid")):
            _stop(daemon, Path(pidfile))
        for daemon in ("slurmctld", "slurmd"):
            Path(f"/var/lib/slurm/{daemon}").mkdir(parents=True, exist_ok=True)
        started = run_command(["slurmctld"])
        if started.returncode != 0:
            raise ServiceError(f"slurmctld did not start: {started.stderr.strip()} (/var/log/slurmctld.log)")
        _wait(lambda: run_command(["scontrol", "ping"]).stdout.count("UP") > 0, 20, "slurmctld",
              "/var/log/slurmctld.log")  # fmt: skip
        timings["slurmctld"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        started = run_command(["slurmd", "-N", "localhost"])
        if started.returncode != 0:
            raise ServiceError(f"slurmd did not start: {started.stderr.strip()} (/var/log/slurmd.log)")
        # A node that went down with an earlier controller comes back only when told to.
        run_command(["scontrol", "update", "nodename=localhost", "state=resume"])
        _wait(lambda: node_state().rstrip("*") in {"idle", "mix", "alloc"}, 30, "slurmd (node idle)",
              "/var/log/slurmd.log")  # fmt: skip
        timings["slurmd"] = time.perf_counter() - t0
    log(
        ("local Slurm: reused the running controller" if reused else "local Slurm: started")
        + f" ({gpus} fake GPU(s)); "
        + ", ".join(f"{k} {v:.1f} s" for k, v in timings.items())
    )
    return LocalSlurm(partition=PARTITION, gpus=gpus, reused=reused, timings=timings,
                      started_munge=started_munge)  # fmt: skip


def stop_local_slurm(slurm: LocalSlurm, *, log: Log = print) -> list[str]:
    """Stop the daemons :func:`ensure_local_slurm` started (a reused controller is left running).

    Returns the daemons stopped. munged goes too when it was started here; one that was already running
    (another service's) stays, and so does any munged under a reused controller, which authenticates by it.
    """
    if slurm.reused:
        return []
    stopped = []
    for daemon, pidfile in (("slurmd", Path("/run/slurmd.pid")), ("slurmctld", Path("/run/slurmctld.pid"))):
        if pidfile.is_file():
            _stop(daemon, pidfile)
            stopped.append(daemon)
    if slurm.started_munge and MUNGE_PIDFILE.is_file():
        _stop("munged", MUNGE_PIDFILE)
        stopped.append("munged")
    if stopped:
        log("local Slurm: stopped " + ", ".join(stopped))
    return stopped


def _stop(daemon: str, pidfile: Path) -> None:
    """Stop a daemon we started earlier (its pid file), so that it rereads a changed configuration."""
    if not pidfile.is_file():
        return
    try:
        pid = int(pidfile.read_text().strip())
        os.kill(pid, 15)
    except (ValueError, ProcessLookupError, PermissionError):
        return
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
