"""hl-deadman's connection guard, the engine's side, for engines written in Python (standard library only).

Copy this one file next to the engine (it ships in the package as engines/python/hl_deadman_guard.py) and:

    from hl_deadman_guard import Guard

    guard = Guard("/run/hl-deadman/guard.sock", ["0x1111111111111111111111111111111111111111"],
                  on_notice=lambda notice: print("hl-deadman says", notice))
    guard.start()
    # ... trade; a planned restart: guard.detach(30_000) before exiting; a stop that should cancel: guard.close()
    # whenever the account's resting orders change (the whole set; version 2):
    guard.announce_orders("0x1111111111111111111111111111111111111111",
                          [{"oid": 123, "asset": 0, "trigger": False, "reduce_only": False}])

What it does (docs/operations.md, "Cancel on disconnect"):
- It holds the connection in the engine's own process, in a daemon thread: when the engine dies (a crash, kill -9,
  the OOM killer), the kernel closes the socket and the daemon sees the engine down at once. Nothing outlives it.
- It names the accounts (protocol hl-deadman-guard/2, or /1 against a daemon that speaks only 1), then writes a
  heartbeat line every `heartbeat` seconds. With `auto_heartbeat=False` the engine calls `guard.beat()` from its own
  loop instead, so a hung loop reads as a hung engine (the daemon's --guard-heartbeat-gap).
- A lost connection (the daemon restarting or upgraded) is never an error for the engine: it reconnects with a
  back-off (0.2 s doubling to 5 s) and the daemon, which starts with every account `waiting`, cancels nothing.
- What the daemon tells the engine (version 2) reaches `on_notice` as a dict: {"type": "halted", "account",
  "reason"} (stop trading the account until resumed), {"type": "resumed", "account"}, {"type": "drill", "account",
  "until"} (epoch ms). Callbacks run on the guard's thread; keep them short.
- `announce_orders(account, orders)` (version 2) tells the daemon the account's resting orders, each a dict with
  "oid", "asset" (the exchange's asset index), "trigger" and "reduce_only": on the engine's death the daemon cancels
  them at once without reading first (reduce-only triggers, the stops, are kept unless it is told to cancel stops),
  then reads to confirm. Send the whole set whenever it changes; it is sent again after each reconnect.
"""

import re
import socket
import threading
import time

__all__ = ["Guard", "parse_notice", "orders_lines"]

_ADDRESS = re.compile(r"^0x[0-9a-fA-F]{40}$")
_NOTICE = re.compile(r"^(halted|resumed|drill) (0x[0-9a-fA-F]{40})(?: (.*))?$")
_MAX_LINE = 2048
_MAX_ORDERS = 5000
_MAX_PARTS = 256


def orders_lines(account, orders):
    """The `orders` lines announcing `account`'s resting orders, each at most 2,048 bytes with its newline."""
    account = account.lower()
    if not _ADDRESS.match(account):
        raise ValueError("account must be a 0x address (40 hexadecimal digits)")
    orders = list(orders)
    if len(orders) > _MAX_ORDERS:
        raise ValueError("%d orders announced for %s (at most %d)" % (len(orders), account, _MAX_ORDERS))
    room = _MAX_LINE - 1 - len("orders %s %d/%d " % (account, _MAX_PARTS, _MAX_PARTS))
    chunks, current = [], ""
    for o in orders:
        flags = ("t" if o.get("trigger") else "") + ("r" if o.get("reduce_only") else "")
        item = "%d:%d%s" % (int(o["oid"]), int(o["asset"]), (":" + flags) if flags else "")
        if current and len(current) + 1 + len(item) > room:
            chunks.append(current)
            current = ""
        current = item if not current else current + "," + item
    if current or not chunks:
        chunks.append(current)
    n = len(chunks)
    return ["orders %s %d/%d%s\n" % (account, i + 1, n, (" " + c) if c else "") for i, c in enumerate(chunks)]


def parse_notice(line):
    """A line the daemon wrote after `ok`, as a dict, or None for a line this version does not know."""
    m = _NOTICE.match(line.rstrip("\r"))
    if not m:
        return None
    kind, account, rest = m.group(1), m.group(2).lower(), m.group(3) or ""
    if kind == "halted":
        return {"type": "halted", "account": account, "reason": rest.strip() or "halted"}
    if kind == "resumed":
        return {"type": "resumed", "account": account} if rest == "" else None
    if not re.match(r"^\d{1,16}$", rest):
        return None
    return {"type": "drill", "account": account, "until": int(rest)}


def _address(target):
    m = re.match(r"^\[?([0-9a-fA-F:.]+?)\]?:(\d+)$", target)
    if m and "/" not in target:
        host = m.group(1)
        return (socket.AF_INET6 if ":" in host else socket.AF_INET), (host, int(m.group(2)))
    return socket.AF_UNIX, target


class Guard:
    """Holds hl-deadman's switch for `accounts` while the engine's process lives."""

    def __init__(self, target, accounts, heartbeat=1.0, on_notice=None, on_state=None, version=2,
                 auto_heartbeat=True, backoff=(0.2, 5.0)):
        accounts = [a.lower() for a in accounts]
        if not accounts or any(not _ADDRESS.match(a) for a in accounts):
            raise ValueError("accounts must be 0x addresses (40 hexadecimal digits)")
        self.target = target
        self.accounts = accounts
        self.heartbeat = heartbeat
        self.on_notice = on_notice
        self.on_state = on_state
        self.version = version
        self.auto_heartbeat = auto_heartbeat
        self.backoff = backoff
        self.connected = False
        self._sock = None
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._thread = None
        self._orders = {}  # account -> its latest announcement's lines, sent again after each reconnect

    # -- the engine's calls -----------------------------------------------------------------------------------
    def start(self):
        """Starts the guard's thread (a daemon thread: it never keeps the engine alive)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="hl-deadman-guard", daemon=True)
            self._thread.start()
        return self

    def beat(self):
        """One heartbeat now (with auto_heartbeat=False, call it from the engine's loop)."""
        self._send(b"\n")

    def announce_orders(self, account, orders):
        """The account's resting orders (the whole set), for the daemon to cancel at once on the engine's death.

        Returns whether it was written now (False while not connected, or to a daemon that speaks only version 1);
        kept and sent again after each reconnect either way."""
        account = account.lower()
        if account not in self.accounts:
            raise ValueError("%s is not an account this guard named" % account)
        lines = orders_lines(account, orders)
        with self._lock:
            self._orders[account] = lines
        if self.version < 2:
            return False
        return self._send("".join(lines).encode())

    def detach(self, ms):
        """A planned restart: no engine down if a new engine names the accounts within `ms`. Then closes."""
        self._end(("detach %d\n" % int(ms)).encode())

    def close(self):
        """Closes for good: the daemon sees the engine down for these accounts (its policy follows)."""
        self._end(b"")

    # -- the thread --------------------------------------------------------------------------------------------
    def _state(self, state, detail=None):
        if self.on_state:
            self.on_state(state, detail)

    def _send(self, data):
        with self._lock:
            s = self._sock
            if s is None:
                return False
            try:
                s.sendall(data)
                return True
            except OSError:  # BrokenPipeError, ConnectionResetError: the daemon went; the reader reconnects
                return False

    def _end(self, last):
        self._closed.set()
        with self._lock:
            s, self._sock = self._sock, None
        if s is not None:
            try:
                if last:
                    s.sendall(last)
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def _run(self):
        delay = self.backoff[0]
        while not self._closed.is_set():
            ok = self._session()
            if self._closed.is_set():
                break
            delay = self.backoff[0] if ok else min(delay * 2, self.backoff[1])
            self._closed.wait(delay)

    def _session(self):
        """One connection, until it is lost; True when the daemon had accepted it."""
        family, address = _address(self.target)
        s = socket.socket(family, socket.SOCK_STREAM)
        try:
            s.settimeout(5.0)
            s.connect(address)
            hello = "hl-deadman-guard/%d %s\n" % (self.version, ",".join(self.accounts))
            s.sendall(hello.encode())
            reader = s.makefile("r", encoding="utf-8", newline="\n")
            answer = reader.readline(_MAX_LINE).rstrip("\r\n")
            if answer != "ok":
                if self.version == 2 and "not supported" in answer:
                    self.version = 1  # a daemon older than version 2
                self._state("refused", answer[len("refused "):] if answer.startswith("refused ") else answer)
                return False
            with self._lock:
                if self._closed.is_set():
                    return False
                self._sock = s
                if self.version >= 2 and self._orders:
                    s.sendall("".join(l for lines in self._orders.values() for l in lines).encode())
            self.connected = True
            self._state("connected")
            s.settimeout(None)
            beats = None
            if self.auto_heartbeat:
                beats = threading.Thread(target=self._beats, args=(s,), daemon=True)
                beats.start()
            for line in reader:
                notice = parse_notice(line.rstrip("\n"))
                if notice is not None and self.on_notice:
                    self.on_notice(notice)
            return True
        except OSError:
            return False
        finally:
            with self._lock:
                if self._sock is s:
                    self._sock = None
            was = self.connected
            self.connected = False
            try:
                s.close()
            except OSError:
                pass
            if was:
                self._state("disconnected")

    def _beats(self, s):
        while not self._closed.is_set():
            with self._lock:
                if self._sock is not s:
                    return
            if not self._send(b"\n"):
                return
            self._closed.wait(self.heartbeat)
