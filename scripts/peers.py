#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""make peers: recursive watchers side by side on one git work tree.

  peers.py run [--log FILE]     build (once) the repository, run every tool,
                                write the log, print the table
  peers.py report LOG [--svg F] the markdown table (and a plot) from a log

The repository is built under the work directory (PEERS_DIR, default
~/.cache/inotify-fd/peers) from subtrees (PEERS_SUBTREES) of Debian's two
kernel source tarballs: revision v6.1 from /usr/src/linux-source-6.1.tar.xz,
v6.12 from /usr/src/linux-source-6.12.tar.xz.  It is kept, and reused while
the subtree list and the tarballs are unchanged.

Per tool and run: the tree is reset to v6.1 (git checkout -f, git clean
-fdx), the tool starts its documented recursive watch of the work tree
with defaults, the script waits until it is ready (its own ready signal
when it has one, then a sentinel file made in the deepest directory, a
new one every 0.2 s, until the tool reports one: that moment is "ready"),
does PEERS_SWITCHES git checkouts alternating v6.12 and v6.1, makes a
probe file in every directory of the final tree (.git excepted), waits
until the tool's output has been still and its processes at rest for
PEERS_QUIET seconds (default 2), and stops it.  CPU (user+sys) and peak RSS are read from /proc for every
process of the tool's session(s): a daemon the tool talks to (watchman's
server) is started in a session of its own and counted too.

Only /usr/bin/python3 (Debian's) is meant to run this: watchdog is
Debian's python3-watchdog.
"""

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
import tty

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
SHIMS = os.path.join(HERE, "peers")
REVS = (("v6.1", "/usr/src/linux-source-6.1.tar.xz", "linux-source-6.1"),
        ("v6.12", "/usr/src/linux-source-6.12.tar.xz", "linux-source-6.12"))
DEFAULT_SUBTREES = "fs drivers/net drivers/gpu net sound"
REF = "libinofd-procfd"      # the row the ratios divide by
CLK = os.sysconf("SC_CLK_TCK")


def log_line(fh, text):
    sys.stdout.write(text + "\n")
    sys.stdout.flush()
    if fh:
        fh.write(text + "\n")
        fh.flush()


def kv(pairs):
    out = []
    for k, v in pairs:
        v = str(v)
        if v == "" or re.search(r'[\s"\'\\=]', v):
            v = shlex.quote(v)
        out.append("%s=%s" % (k, v))
    return " ".join(out)


def sh(argv, **kw):
    return subprocess.run(argv, check=True, **kw)


def git(repo, *args, **kw):
    return sh(["git", "-C", repo, "-c", "advice.detachedHead=false"] +
              list(args), **kw)


# ------------------------------------------------------------ the repository
def build_repo(work, subtrees, fh):
    repo = os.path.join(work, "repo")
    stamp_file = os.path.join(work, "repo.stamp")
    stamp = "subtrees=%s\n" % " ".join(subtrees)
    for _, tar, _ in REVS:
        st = os.stat(tar)
        stamp += "%s %d %d\n" % (tar, st.st_size, int(st.st_mtime))
    try:
        with open(stamp_file) as f:
            if f.read() == stamp and os.path.isdir(os.path.join(repo, ".git")):
                log_line(fh, "peers: repo cached " + kv([("dir", repo)]))
                return repo
    except FileNotFoundError:
        pass
    t0 = time.time()
    shutil.rmtree(repo, ignore_errors=True)
    if os.path.exists(stamp_file):
        os.unlink(stamp_file)
    os.makedirs(repo)
    git(repo, "init", "-q")
    git(repo, "config", "gc.auto", "0")
    env = dict(os.environ, GIT_AUTHOR_NAME="peers", GIT_AUTHOR_EMAIL="peers@localhost",
               GIT_COMMITTER_NAME="peers", GIT_COMMITTER_EMAIL="peers@localhost",
               GIT_AUTHOR_DATE="2026-01-01T00:00:00Z",
               GIT_COMMITTER_DATE="2026-01-01T00:00:00Z")
    for rev, tar, top in REVS:
        src = os.path.join(work, "src-" + rev)
        shutil.rmtree(src, ignore_errors=True)
        os.makedirs(src)
        log_line(fh, "peers: extracting %s from %s" % (" ".join(subtrees), tar))
        sh(["tar", "-xJf", tar, "-C", src, "--strip-components=1"] +
           ["%s/%s" % (top, s) for s in subtrees])
        gd = ["git", "--git-dir", os.path.join(repo, ".git"), "--work-tree", src]
        sh(gd + ["add", "-A"], env=env)
        sh(gd + ["commit", "-q", "-m", "%s: %s" % (rev, " ".join(subtrees))], env=env)
        sh(gd + ["tag", rev], env=env)
        shutil.rmtree(src)
    git(repo, "gc", "-q")
    git(repo, "reset", "-q", "--hard", REVS[0][0])
    with open(stamp_file, "w") as f:
        f.write(stamp)
    log_line(fh, "peers: repo built " + kv([("dir", repo), ("seconds", "%.0f" % (time.time() - t0))]))
    return repo


def rev_paths(repo, rev):
    out = subprocess.run(["git", "-C", repo, "ls-tree", "-r", "--name-only", "-z", rev],
                         check=True, stdout=subprocess.PIPE).stdout
    files = set(p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p)
    dirs = set()
    for p in files:
        d = os.path.dirname(p)
        while d and d not in dirs:
            dirs.add(d)
            d = os.path.dirname(d)
    return files, dirs


def reset_tree(repo, rev):
    # a git killed in the middle (an interrupted run) leaves its lock
    lock = os.path.join(repo, ".git", "index.lock")
    if os.path.exists(lock):
        os.unlink(lock)
    git(repo, "checkout", "-q", "-f", rev)
    git(repo, "reset", "-q", "--hard")
    git(repo, "clean", "-q", "-f", "-d", "-x")


def tree_dirs(root):
    out = []
    for d, sub, _ in os.walk(root):
        if d == root and ".git" in sub:
            sub.remove(".git")
        sub.sort()
        out.append(d)
    return out


# ------------------------------------------------------------ measuring
class Sampler(threading.Thread):
    """CPU and peak RSS of every process whose session is one of sids.

    Every 0.1 s the known processes are read; every 0.3 s /proc is listed
    again for new ones.  cpu: the last utime+stime read of each process
    (children of a process count in its own entry, never via cutime, so
    nothing is counted twice); rss: the sum of each process's VmHWM.
    """

    def __init__(self):
        super().__init__(daemon=True)
        self.sids = set()
        self.cpu = {}
        self.hwm = {}
        self.names = {}
        self.lock = threading.Lock()
        self.stop_ev = threading.Event()
        self.known = set()
        self.n = 0

    def add(self, sid):
        with self.lock:
            self.sids.add(sid)
            self.known.add(sid)

    def read(self, pid):
        try:
            with open("/proc/%d/stat" % pid, "rb") as f:
                s = f.read()
            r = s.rindex(b")")
            fl = s[r + 2:].split()
            if int(fl[3]) not in self.sids:
                return False
            cpu = (int(fl[11]) + int(fl[12])) / CLK
            hwm = 0
            with open("/proc/%d/status" % pid, "rb") as f:
                for line in f:
                    if line.startswith(b"VmHWM:"):
                        hwm = int(line.split()[1])
                        break
        except (OSError, ValueError, IndexError):
            return False
        self.cpu[pid] = max(cpu, self.cpu.get(pid, 0))
        if hwm:
            self.hwm[pid] = max(hwm, self.hwm.get(pid, 0))
        if pid not in self.names:
            self.names[pid] = s[s.index(b"(") + 1:r].decode(errors="replace")
        return True

    def sample(self):
        with self.lock:
            if self.n % 3 == 0:
                for e in os.listdir("/proc"):
                    if e.isdigit():
                        p = int(e)
                        if p not in self.known and self.read(p):
                            self.known.add(p)
            self.n += 1
            for p in list(self.known):
                self.read(p)

    def run(self):
        while not self.stop_ev.wait(0.1):
            self.sample()

    def totals(self):
        with self.lock:
            return sum(self.cpu.values()), sum(self.hwm.values())


class Out:
    """Reads a growing output file line by line."""

    def __init__(self, path):
        self.path = path
        self.off = 0
        self.buf = b""

    def new_lines(self):
        try:
            with open(self.path, "rb") as f:
                f.seek(self.off)
                data = f.read()
        except FileNotFoundError:
            return []
        self.off += len(data)
        self.buf += data
        lines = self.buf.split(b"\n")
        self.buf = lines.pop()
        return [l.decode("utf-8", "surrogateescape") for l in lines]


# ------------------------------------------------------------ the tools
class Tool:
    name = "?"
    ready_text = None        # a line (regex) the tool prints when ready
    ready_stream = "out"
    overflow_na = False      # the tool has no way to report an overflow
    mode = ""                # what the row runs, for the log

    def argv(self, root):
        raise NotImplementedError

    def env(self):
        return dict(os.environ)

    def version(self):
        return "?"

    def available(self):
        return None          # or the reason to skip

    def paths(self, line, root):
        """Paths an output line names (relative to root or absolute)."""
        return []

    def overflows(self, out_lines, err_text):
        return sum(1 for l in out_lines if "Q_OVERFLOW" in l)

    pty = False              # stdout on a terminal (see Fswatch)

    def start(self, root, d, sampler):
        self.outp = os.path.join(d, "out")
        self.errp = os.path.join(d, "err")
        o = open(self.outp, "wb")
        e = open(self.errp, "wb")
        if self.pty:
            master, slave = os.openpty()
            tty.setraw(slave)
            self.proc = subprocess.Popen(self.argv(root), stdout=slave, stderr=e,
                                         stdin=subprocess.DEVNULL, env=self.env(),
                                         start_new_session=True, cwd=d)
            os.close(slave)
            threading.Thread(target=copy_pty, args=(master, o), daemon=True).start()
        else:
            self.proc = subprocess.Popen(self.argv(root), stdout=o, stderr=e,
                                         stdin=subprocess.DEVNULL, env=self.env(),
                                         start_new_session=True, cwd=d)
            o.close()
        e.close()
        sampler.add(self.proc.pid)
        return [self.proc]

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        stop_procs([self.proc])


def copy_pty(master, o):
    """What a tool writes on its terminal, to its output file."""
    while True:
        try:
            b = os.read(master, 65536)
        except OSError:
            b = b""
        if not b:
            break
        o.write(b)
        o.flush()
    o.close()
    os.close(master)


def stop_procs(procs):
    for p in procs:
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
    end = time.time() + 5
    for p in procs:
        try:
            p.wait(max(0.1, end - time.time()))
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()


INOTIFYWAIT_RE = re.compile(r"^(.*/) ([A-Z_,]+)(?: (.*))?$")


class WatchFd(Tool):
    ready_text = r"^Watches established\."
    ready_stream = "err"

    def __init__(self, backend, exe):
        self.backend = backend
        self.exe = exe
        self.name = "libinofd-" + backend
        self.mode = "INOFD_BACKEND=%s watch-fd -m -r ROOT" % backend

    def argv(self, root):
        return [self.exe, "-m", "-r", root]

    def env(self):
        return dict(os.environ, INOFD_BACKEND=self.backend)

    def version(self):
        return src_version()

    def available(self):
        if not os.access(self.exe, os.X_OK):
            return "%s missing (make examples)" % self.exe
        if self.backend == "kernel":
            # -v says which backend the instance got
            r = subprocess.run([self.exe, "-v", "-t", "1", "/"], env=self.env(),
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True)
            if "backend: kernel" not in r.stderr:
                return ("the kernel backend (ioctl INOTIFY_IOC_WATCH) exists only in the "
                        "patched guest kernel, not on this host")
        return None

    def paths(self, line, root):
        m = INOTIFYWAIT_RE.match(line)
        if not m:
            return []
        return [m.group(1) + (m.group(3) or "")]


class Inotifywait(Tool):
    name = "inotifywait"
    ready_text = r"^Watches established\."
    ready_stream = "err"
    mode = "inotifywait -r -m ROOT"

    def argv(self, root):
        return ["inotifywait", "-r", "-m", root]

    def version(self):
        r = subprocess.run(["inotifywait", "--help"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        return r.stdout.split("\n")[0].replace("inotifywait ", "")

    def available(self):
        return None if shutil.which("inotifywait") else "inotifywait missing (inotify-tools)"

    def paths(self, line, root):
        m = INOTIFYWAIT_RE.match(line)
        return [m.group(1) + (m.group(3) or "")] if m else []


class Fswatch(Tool):
    """fswatch writes through a fully buffered std::cout when its output
    is not a terminal: events would come in 4 KiB lumps and the last ones
    only at exit (lost at SIGTERM).  It is given a terminal, as when a
    user runs it in one."""
    name = "fswatch"
    pty = True
    mode = "fswatch -r ROOT, stdout a pty (no ready signal: sentinel only; default latency 1 s)"

    def argv(self, root):
        return ["fswatch", "-r", root]

    def version(self):
        r = subprocess.run(["fswatch", "--version"], stdout=subprocess.PIPE, text=True)
        return r.stdout.split("\n")[0].replace("fswatch ", "")

    def available(self):
        return None if shutil.which("fswatch") else "fswatch missing (apt-get install fswatch)"

    def paths(self, line, root):
        return [line] if line.startswith("/") else []

    def overflows(self, out_lines, err_text):
        return len(re.findall(r"overflow", err_text, re.I))


class Shim(Tool):
    """A tool run through a small script that prints "type\\tpath" lines."""
    ready_text = r"^READY$"

    def paths(self, line, root):
        f = line.split("\t")
        if len(f) < 2 or f[0] in ("OVERFLOW", "ERROR"):
            return []
        out = [f[-1]]
        if len(f) >= 3 and f[-1].startswith("-> "):
            out = [f[1], f[-1][3:]]
        return out

    def overflows(self, out_lines, err_text):
        return sum(1 for l in out_lines if l.startswith("OVERFLOW") or
                   (l.startswith("ERROR") and re.search("overflow", l, re.I)))


class Watchdog(Shim):
    name = "watchdog"
    overflow_na = True
    mode = "python3 watchdog_watch.py ROOT: Observer(), schedule(h, ROOT, recursive=True)"

    def argv(self, root):
        return ["/usr/bin/python3", os.path.join(SHIMS, "watchdog_watch.py"), root]

    def version(self):
        r = subprocess.run(["/usr/bin/python3", "-c",
                            "from watchdog.version import VERSION_STRING as v; print(v)"],
                           stdout=subprocess.PIPE, text=True)
        return r.stdout.strip() or "?"

    def available(self):
        r = subprocess.run(["/usr/bin/python3", "-c", "import watchdog.observers"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return None if r.returncode == 0 else "python3-watchdog missing"

    def paths(self, line, root):
        f = line.split("\t")
        if len(f) < 2:
            return []
        out = [f[1]]
        if len(f) >= 3 and f[2].startswith("-> "):
            out.append(f[2][3:])
        return out


def src_version():
    """The project's commit, "-dirty" when a tracked file differs (the
    benchmark logs under docs/bench/ that this run writes excepted)."""
    try:
        rev = subprocess.run(["git", "-C", TOP, "describe", "--always"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", TOP, "status", "--porcelain",
                                "--untracked-files=no", "--", ".", ":!docs/bench"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               text=True).stdout.strip()
    except OSError:
        return "?"
    return (rev + ("-dirty" if dirty else "")) if rev else "?"


class PyInofd(Shim):
    name = "python-inofd"
    mode = "python3 inofd_watch.py ROOT: Instance(), watch_tree(ROOT, IN_ALL_EVENTS)"

    def __init__(self, pypath):
        self.pypath = pypath

    def env(self):
        e = dict(os.environ)
        e["PYTHONPATH"] = self.pypath + (":" + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
        lib = os.path.join(TOP, "libinotify")
        e["LD_LIBRARY_PATH"] = lib + (":" + e["LD_LIBRARY_PATH"] if e.get("LD_LIBRARY_PATH") else "")
        return e

    def argv(self, root):
        return ["/usr/bin/python3", os.path.join(SHIMS, "inofd_watch.py"), root]

    def version(self):
        r = subprocess.run(["/usr/bin/python3", "-c",
                            "import inofd; print('%d.%d' % inofd.library_version())"],
                           env=self.env(), stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True)
        return "%s (libinofd %s)" % (src_version(), r.stdout.strip() or "?")

    def available(self):
        r = subprocess.run(["/usr/bin/python3", "-c", "import inofd"], env=self.env(),
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if r.returncode == 0:
            return None
        return ("the Python binding is not importable from %s (%s)" %
                (self.pypath, (r.stderr.strip().split("\n") or ["?"])[-1]))

    def paths(self, line, root):
        f = line.split("\t")
        return [f[2]] if len(f) >= 3 and f[2] else []


class PyWatchfiles(PyInofd):
    name = "python-inofd-watchfiles"
    ready_text = None        # set up when iterated: sentinel only
    overflow_na = True       # a RESCAN becomes the changes a re-walk finds
    mode = ("python3 inofd_watchfiles.py ROOT: for changes in "
            "inofd.watchfiles.watch(ROOT) (DefaultFilter, debounce 1600 ms)")

    def argv(self, root):
        return ["/usr/bin/python3", os.path.join(SHIMS, "inofd_watchfiles.py"), root]

    def paths(self, line, root):
        f = line.split("\t")
        return [f[1]] if len(f) >= 2 else []


class PyObserver(PyInofd):
    name = "python-inofd-observer"
    ready_text = r"^READY$"
    mode = ("python3 inofd_observer.py ROOT: inofd.watchdog.InofdObserver(), "
            "schedule(h, ROOT, recursive=True)")

    def argv(self, root):
        return ["/usr/bin/python3", os.path.join(SHIMS, "inofd_observer.py"), root]

    def paths(self, line, root):
        if line.startswith("OVERFLOW"):
            return []
        return Watchdog.paths(self, line, root)


class Npm(Shim):
    def __init__(self, npmdir, state):
        self.npmdir = npmdir
        self.state = state

    def available(self):
        return self.state.get("skip")

    def version(self):
        try:
            with open(os.path.join(self.npmdir, "node_modules", self.pkg, "package.json")) as f:
                return json.load(f)["version"]
        except (OSError, ValueError, KeyError):
            return "?"

    def argv(self, root):
        # the shim is copied next to node_modules, where import finds them
        return ["node", os.path.join(self.npmdir, self.shim), root]


class Parcel(Npm):
    name = "parcel-watcher"
    pkg = "@parcel/watcher"
    shim = "parcel_watch.js"
    mode = "node parcel_watch.js ROOT: subscribe(ROOT, cb), no options"


class Chokidar(Npm):
    name = "chokidar"
    pkg = "chokidar"
    shim = "chokidar_watch.mjs"
    overflow_na = True
    mode = "node chokidar_watch.mjs ROOT: watch(ROOT), no options"


class Watchman(Tool):
    name = "watchman"
    mode = ("watchman watch-project ROOT, then subscribe (no expression, default "
            "fields); its own server: --foreground --no-save-state, socket and "
            "log in the run directory")

    def version(self):
        r = subprocess.run(["watchman", "--version"], stdout=subprocess.PIPE, text=True)
        return r.stdout.strip()

    def available(self):
        return None if shutil.which("watchman") else "watchman missing (apt-get install watchman)"

    def start(self, root, d, sampler):
        self.outp = os.path.join(d, "out")
        self.errp = os.path.join(d, "err")
        self.wlog = os.path.join(d, "watchman.log")
        sock = os.path.join(d, "sock")
        base = ["watchman", "--sockname=" + sock]
        e = open(self.errp, "wb")
        self.server = subprocess.Popen(
            base + ["--foreground", "--logfile=" + self.wlog, "--no-save-state",
                    "--statefile=" + os.path.join(d, "state"),
                    "--pidfile=" + os.path.join(d, "pid")],
            stdin=subprocess.DEVNULL, stdout=e, stderr=e, start_new_session=True, cwd=d)
        sampler.add(self.server.pid)
        end = time.time() + 20
        while not os.path.exists(sock) and time.time() < end and self.server.poll() is None:
            time.sleep(0.05)
        wp = subprocess.run(base + ["--no-spawn", "--no-pretty", "watch-project", root],
                            stdout=subprocess.PIPE, stderr=e, text=True, cwd=d)
        e.write(("watch-project: " + wp.stdout).encode())
        e.flush()
        o = open(self.outp, "wb")
        self.client = subprocess.Popen(base + ["--no-spawn", "--no-pretty", "-j", "-p"],
                                       stdin=subprocess.PIPE, stdout=o, stderr=e,
                                       start_new_session=True, cwd=d)
        o.close()
        e.close()
        sampler.add(self.client.pid)
        self.client.stdin.write(json.dumps(["subscribe", root, "peers", {}]).encode() + b"\n")
        self.client.stdin.flush()
        self.proc = self.client
        return [self.server, self.client]

    def alive(self):
        return self.server.poll() is None and self.client.poll() is None

    def stop(self):
        try:
            self.client.stdin.close()
        except OSError:
            pass
        stop_procs([self.client, self.server])

    def ready_line(self, line):
        # the answer to subscribe comes once the crawl settled
        return line.startswith('{"subscribe":')

    def paths(self, line, root):
        if not line.startswith("{"):
            return []
        try:
            j = json.loads(line)
        except ValueError:
            return []
        if "subscription" not in j or j.get("is_fresh_instance"):
            return []
        return [f["name"] if isinstance(f, dict) else f for f in j.get("files", [])]

    def overflows(self, out_lines, err_text):
        n = 0
        try:
            with open(self.wlog, errors="replace") as f:
                n = sum(1 for l in f if re.search(r"IN_Q_OVERFLOW|overflow", l, re.I))
        except OSError:
            pass
        return n


# ------------------------------------------------------------ one run
def run_tool(tool, *a):
    try:
        return run_tool1(tool, *a)
    except BaseException:
        try:
            tool.stop()
        except Exception:
            pass
        raise


def run_tool1(tool, repo, run, switches, quiet, valid, deep, rundir, fh):
    revA, revB = REVS[0][0], REVS[1][0]
    reset_tree(repo, revA)
    shutil.rmtree(rundir, ignore_errors=True)
    os.makedirs(rundir)
    sampler = Sampler()
    sampler.start()
    res = {"status": "ok"}
    t0 = time.time()
    procs = tool.start(repo, rundir, sampler)
    out = Out(tool.outp)
    err = Out(tool.errp)
    own_ready = tool.ready_text is None and not hasattr(tool, "ready_line")
    sentinels = []
    seen_sentinel = False
    ready_off = None
    k = 0
    last_sent = 0
    limit = t0 + 600
    while time.time() < limit:
        lines = out.new_lines()
        elines = err.new_lines()
        if not own_ready:
            src = elines if tool.ready_stream == "err" else lines
            for l in src:
                if (hasattr(tool, "ready_line") and tool.ready_line(l)) or \
                   (tool.ready_text and re.search(tool.ready_text, l)):
                    own_ready = True
                    res["own_ready_s"] = "%.3f" % (time.time() - t0)
        if own_ready:
            for l in lines:
                for p in tool.paths(l, repo):
                    if os.path.basename(p.rstrip("/")).startswith(".peers-ready-"):
                        seen_sentinel = True
            if seen_sentinel:
                break
            now = time.time()
            if now - last_sent >= 0.2:
                p = os.path.join(deep, ".peers-ready-%d" % k)
                k += 1
                open(p, "w").close()
                sentinels.append(p)
                last_sent = now
        if not tool.alive():
            break
        time.sleep(0.02)
    if not seen_sentinel:
        sampler.sample()
        cpu, rss = sampler.totals()
        alive = tool.alive()
        tool.stop()
        sampler.stop_ev.set()
        sampler.join()
        res["status"] = "not-ready" if alive else "exited:rc=%s@start" % ",".join(
            str(p.returncode) for p in procs)
        return res, cpu, rss
    ready = time.time() - t0
    ready_off = out.off
    res["ready_s"] = "%.3f" % ready
    for p in sentinels:
        os.unlink(p)
    rel_sent = set(os.path.relpath(p, repo) for p in sentinels)

    ts = time.time()
    exited_at = None
    for i in range(switches):
        git(repo, "checkout", "-q", revB if i % 2 == 0 else revA)
        if exited_at is None and not tool.alive():
            exited_at = "switch %d" % (i + 1)
    res["switch_s"] = "%.2f" % (time.time() - ts)

    probe = "peers-probe-%d" % run
    dirs = tree_dirs(repo)
    probes = set()
    for dpath in dirs:
        p = os.path.join(dpath, probe)
        os.close(os.open(p, os.O_CREAT | os.O_WRONLY, 0o644))
        probes.add(os.path.relpath(p, repo))
    if exited_at is None and not tool.alive():
        exited_at = "probes"

    # quiescence: output and error files still, and the tool's processes
    # at rest (under 20% of a CPU), for `quiet` seconds: a tool that is
    # still working, only slowly on a loaded machine, is waited for
    last = (-1, -1)
    still = time.time()
    lcpu = sampler.totals()[0]
    qlimit = time.time() + 300
    while time.time() < qlimit:
        try:
            cur = (os.path.getsize(tool.outp), os.path.getsize(tool.errp))
        except OSError:
            cur = last
        now = time.time()
        cpu = sampler.totals()[0]
        if cur != last or cpu - lcpu > 0.02:
            last, still = cur, now
        elif now - still >= quiet:
            break
        lcpu = cpu
        if not tool.alive():
            break
        time.sleep(0.1)
    sampler.sample()
    cpu, rss = sampler.totals()
    alive = tool.alive()
    if not alive and exited_at is None:
        exited_at = "quiescence"
    tool.stop()
    sampler.stop_ev.set()
    sampler.join()
    if not alive:
        rc = [p.returncode for p in procs]
        res["status"] = "exited:rc=%s@%s" % (",".join(str(r) for r in rc), exited_at)

    with open(tool.outp, "rb") as f:
        f.seek(ready_off)
        olines = f.read().decode("utf-8", "surrogateescape").split("\n")
    with open(tool.errp, "rb") as f:
        etext = f.read().decode("utf-8", "surrogateescape")
    events = 0
    seen = set()
    wrong = set()
    root = repo.rstrip("/") + "/"
    for l in olines:
        ps = tool.paths(l, repo)
        if not ps:
            continue
        events += 1 if not isinstance(tool, Watchman) else len(ps)
        for p in ps:
            if p.startswith("/"):
                if p.rstrip("/") == repo.rstrip("/"):
                    rel = ""
                elif p.startswith(root):
                    rel = p[len(root):].rstrip("/")
                else:
                    wrong.add(p)
                    continue
            else:
                rel = p.rstrip("/")
            seen.add(rel)
            if rel == "" or rel == ".git" or rel.startswith(".git/"):
                continue
            if rel not in valid and rel not in probes and rel not in rel_sent:
                wrong.add(rel)
    res["events"] = events
    res["probes"] = len(probes)
    res["missing"] = len(probes - seen)
    res["wrong"] = len(wrong)
    res["overflows"] = "n/a" if tool.overflow_na else tool.overflows(olines, etext)
    with open(os.path.join(rundir, "missing"), "w") as f:
        f.write("\n".join(sorted(probes - seen)) + "\n")
    with open(os.path.join(rundir, "wrong"), "w") as f:
        f.write("\n".join(sorted(wrong)) + "\n")
    return res, cpu, rss


def npm_setup(npmdir, fh):
    state = {}
    want = os.environ.get("PEERS_NPM", "@parcel/watcher@2 chokidar@5").split()
    have = all(os.path.isdir(os.path.join(npmdir, "node_modules", w.rsplit("@", 1)[0]))
               for w in want)
    if not shutil.which("node") or not shutil.which("npm"):
        state["skip"] = "node or npm missing"
        return state
    if not have:
        os.makedirs(npmdir, exist_ok=True)
        log_line(fh, "peers: npm install %s into %s" % (" ".join(want), npmdir))
        r = subprocess.run(["npm", "install", "--prefix", npmdir, "--no-audit", "--no-fund",
                            "--no-save", "--fetch-timeout=30000", "--fetch-retries=1"] + want,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=600)
        if r.returncode != 0:
            state["skip"] = ("npm registry unreachable or install failed: %s" %
                             (r.stdout.strip().split("\n") or ["?"])[-1])
            return state
    for s in ("parcel_watch.js", "chokidar_watch.mjs"):
        shutil.copy(os.path.join(SHIMS, s), os.path.join(npmdir, s))
    return state


def cmd_run(args):
    work = os.environ.get("PEERS_DIR") or os.path.join(
        os.environ.get("CACHE") or os.path.expanduser("~/.cache/inotify-fd"), "peers")
    runs = int(os.environ.get("PEERS_RUNS", "2"))
    switches = int(os.environ.get("PEERS_SWITCHES", "6"))
    quiet = float(os.environ.get("PEERS_QUIET", "2"))
    subtrees = os.environ.get("PEERS_SUBTREES", DEFAULT_SUBTREES).split()
    only = os.environ.get("PEERS_TOOLS", "").replace(",", " ").split()
    watch_fd = os.environ.get("PEERS_WATCH_FD", os.path.join(TOP, "examples", "watch-fd"))
    pypath = os.environ.get("PEERS_PYINOFD", os.path.join(TOP, "python"))
    logp = None
    if "--log" in args:
        logp = args[args.index("--log") + 1]
    os.makedirs(work, exist_ok=True)
    fh = open(logp, "w") if logp else None

    log_line(fh, "peers: date %s" % time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    cpu = "?"
    with open("/proc/cpuinfo") as f:
        for l in f:
            if l.startswith("model name"):
                cpu = l.split(":", 1)[1].strip()
                break
    mem = open("/proc/meminfo").readline().split()[1]
    iq = {}
    for k in ("max_queued_events", "max_user_watches", "max_user_instances"):
        with open("/proc/sys/fs/inotify/" + k) as f:
            iq[k] = f.read().strip()
    log_line(fh, "peers: host " + kv([("cpu", cpu), ("cpus", os.cpu_count()),
                                      ("kernel", os.uname().release), ("mem_kib", mem)] +
                                     list(iq.items())))
    log_line(fh, "peers: loadavg before " + open("/proc/loadavg").read().strip())
    repo = build_repo(work, subtrees, fh)
    fa, da = rev_paths(repo, REVS[0][0])
    fb, db = rev_paths(repo, REVS[1][0])
    valid = fa | fb | da | db
    log_line(fh, "peers: tree " + kv([
        ("subtrees", " ".join(subtrees)),
        ("dirs_v6.1", len(da) + 1), ("dirs_v6.12", len(db) + 1),
        ("dirs_only_in_one", len(da ^ db)), ("files_v6.1", len(fa)),
        ("files_v6.12", len(fb)), ("files_changed", sum(1 for _ in changed(repo)))]))
    log_line(fh, "peers: config " + kv([("runs", runs), ("switches", switches),
                                        ("quiet_s", quiet), ("work", work)]))
    # the deepest directory of the starting tree (sorted first among equals)
    deep = max(sorted(da), key=lambda p: p.count("/"))
    deep = os.path.join(repo, deep)

    state = npm_setup(os.path.join(work, "npm"), fh)
    tools = [WatchFd("procfd", watch_fd), WatchFd("fanotify", watch_fd),
             WatchFd("kernel", watch_fd), PyInofd(pypath), PyWatchfiles(pypath),
             PyObserver(pypath), Watchdog(), Inotifywait(),
             Fswatch(), Watchman(), Parcel(os.path.join(work, "npm"), state),
             Chokidar(os.path.join(work, "npm"), state)]
    if only:
        tools = [t for t in tools if t.name in only]
    active = []
    for t in tools:
        why = t.available()
        if why:
            log_line(fh, "peers: skip " + kv([("name", t.name), ("reason", why)]))
            continue
        log_line(fh, "peers: tool " + kv([("name", t.name), ("version", t.version()),
                                          ("mode", t.mode)]))
        active.append(t)
    # run 1 of every tool, then run 2, ...: load changes spread over all.
    # SIGTERM or ^C: the tool running is stopped, the log says so and the
    # table is made of the runs done.
    try:
        run_all(active, runs, repo, switches, quiet, valid, deep, work, fh)
    except KeyboardInterrupt:
        log_line(fh, "peers: interrupted")
    try:
        reset_tree(repo, REVS[0][0])
    except subprocess.CalledProcessError:
        pass
    log_line(fh, "peers: loadavg after " + open("/proc/loadavg").read().strip())
    if fh:
        fh.close()
    print()
    if logp:
        return cmd_report([logp] + (["--svg", args[args.index("--svg") + 1]]
                                    if "--svg" in args else []))
    return 0


def run_all(active, runs, repo, switches, quiet, valid, deep, work, fh):
    for run in range(1, runs + 1):
        for t in active:
            rundir = os.path.join(work, "runs", "%s-%d" % (t.name, run))
            la = open("/proc/loadavg").read().split()[0]
            res, c, r = run_tool(t, repo, run, switches, quiet, valid, deep, rundir, fh)
            fields = [("name", t.name), ("run", run), ("status", res["status"])]
            for k in ("ready_s", "own_ready_s"):
                if k in res:
                    fields.append((k, res[k]))
            fields += [("cpu_s", "%.2f" % c), ("rss_kib", r)]
            for k in ("events", "probes", "missing", "wrong", "overflows", "switch_s"):
                if k in res:
                    fields.append((k, res[k]))
            fields.append(("load1", la))
            log_line(fh, "peers: result " + kv(fields))


def changed(repo):
    out = subprocess.run(["git", "-C", repo, "diff", "--no-renames", "--name-only", "-z", REVS[0][0], REVS[1][0]],
                         check=True, stdout=subprocess.PIPE).stdout
    return [p for p in out.split(b"\0") if p]


# ------------------------------------------------------------ the report
class LogError(Exception):
    pass


def parse_log(lines):
    rows = {}
    order = []
    meta = {"skips": [], "tools": {}}
    for n, l in enumerate(lines, 1):
        if not l.startswith("peers: "):
            continue
        kind, _, rest = l[7:].partition(" ")
        if kind in ("result", "skip", "tool", "host", "tree", "config"):
            try:
                d = dict(x.split("=", 1) for x in shlex.split(rest))
            except ValueError as e:
                raise LogError("line %d: %s: %s" % (n, e, l))
        if kind == "result":
            for k in ("name", "run", "status", "cpu_s", "rss_kib"):
                if k not in d:
                    raise LogError("line %d: result without %s" % (n, k))
            try:
                float(d["cpu_s"])
                int(d["rss_kib"])
            except ValueError:
                raise LogError("line %d: cpu_s or rss_kib not a number" % n)
            if d["name"] not in rows:
                rows[d["name"]] = []
                order.append(d["name"])
            rows[d["name"]].append(d)
        elif kind == "skip":
            meta["skips"].append((d.get("name", "?"), d.get("reason", "")))
        elif kind == "tool":
            meta["tools"][d.get("name", "?")] = d
        elif kind in ("host", "tree", "config"):
            meta[kind] = d
        elif kind == "loadavg":
            meta["load_" + rest.split()[0]] = " ".join(rest.split()[1:4])
        elif kind == "date":
            meta["date"] = rest.strip()
    if not order:
        raise LogError("no result line")
    return [(k, rows[k]) for k in order], meta


def mean(xs):
    return sum(xs) / len(xs) if xs else None


def per_run(rs, key, fmt="%s"):
    vals = []
    for r in rs:
        v = r.get(key)
        if v is None:
            vals.append("-")
        else:
            try:
                vals.append(fmt % float(v) if fmt != "%s" else v)
            except ValueError:
                vals.append(v)
    return " / ".join(vals)


def table(rows, meta):
    ref = dict(rows).get(REF)
    rc = mean([float(r["cpu_s"]) for r in ref if r["status"] == "ok"]) if ref else None
    rr = mean([int(r["rss_kib"]) for r in ref if r["status"] == "ok"]) if ref else None
    out = ["| tool | version | ready (s) | CPU (s) | CPU / libinofd | peak RSS (MiB) | RSS / libinofd "
           "| events | missing probes | wrong paths | overflows | notes |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, rs in rows:
        okr = [r for r in rs if r["status"] == "ok"]
        c = mean([float(r["cpu_s"]) for r in rs])
        m = mean([int(r["rss_kib"]) for r in rs])
        cr = "%.1fx" % (c / rc) if rc and c is not None else "-"
        mr = "%.1fx" % (m / rr) if rr and m is not None else "-"
        notes = ["run %s: %s" % (r["run"], r["status"]) for r in rs if r["status"] != "ok"]
        if len(okr) < len(rs):
            pass
        ver = meta["tools"].get(name, {}).get("version", "?")
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            name, ver, per_run(rs, "ready_s", "%.2f"), per_run(rs, "cpu_s", "%.2f"), cr,
            " / ".join("%.1f" % (int(r["rss_kib"]) / 1024) for r in rs), mr,
            per_run(rs, "events"), per_run(rs, "missing"), per_run(rs, "wrong"),
            per_run(rs, "overflows"), "; ".join(notes)))
    for name, why in meta["skips"]:
        out.append("| %s | - | skipped: %s | | | | | | | | | |" % (name, why))
    return "\n".join(out)


def plot(rows, svg):
    dat = svg + ".dat"
    with open(dat, "w") as f:
        for name, rs in rows:
            f.write('"%s" %.3f %.3f\n' % (name, mean([float(r["cpu_s"]) for r in rs]),
                                          mean([int(r["rss_kib"]) for r in rs]) / 1024))
    gp = """set terminal svg size 900,420 dynamic enhanced font 'sans,11'
set output '%s'
set multiplot layout 1,2 title 'make peers: recursive watchers on one git work tree (mean of runs)'
set style data histograms
set style fill solid 0.8 border -1
set boxwidth 0.8
set xtics rotate by -40 scale 0
set logscale y
set grid ytics
set key off
set title 'CPU seconds (user+sys, log scale)'
plot '%s' using 2:xtic(1) lc rgb '#4477aa'
set title 'peak RSS, MiB (sum over processes, log scale)'
plot '%s' using 3:xtic(1) lc rgb '#cc6677'
unset multiplot
""" % (svg, dat, dat)
    r = subprocess.run(["gnuplot"], input=gp, text=True, stderr=subprocess.PIPE)
    os.unlink(dat)
    if r.returncode != 0:
        raise LogError("gnuplot: " + r.stderr.strip())


def cmd_report(args):
    if not args:
        print("usage: peers.py report LOG [--svg FILE]", file=sys.stderr)
        return 2
    svg = args[args.index("--svg") + 1] if "--svg" in args else None
    try:
        with open(args[0], errors="replace") as f:
            rows, meta = parse_log(f.read().split("\n"))
        print(table(rows, meta))
        if svg:
            plot(rows, svg)
    except (LogError, OSError) as e:
        print("peers.py report: %s" % e, file=sys.stderr)
        return 1
    return 0


def term(signum, frame):
    raise KeyboardInterrupt


def main():
    signal.signal(signal.SIGTERM, term)
    if len(sys.argv) < 2 or sys.argv[1] not in ("run", "report"):
        print(__doc__.strip().split("\n\n")[0], file=sys.stderr)
        return 2
    if sys.argv[1] == "run":
        try:
            return cmd_run(sys.argv[2:])
        except KeyboardInterrupt:
            print("peers: interrupted before the first run", file=sys.stderr)
            return 130
    return cmd_report(sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
