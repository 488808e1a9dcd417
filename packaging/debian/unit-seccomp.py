#!/usr/bin/python3
"""Runs a command under the seccomp filter a systemd unit would give it.

systemd turns a unit's SystemCallFilter=, SystemCallErrorNumber=, SystemCallArchitectures=,
RestrictAddressFamilies= and MemoryDenyWriteExecute= into one seccomp program loaded just before
ExecStart= runs. This script reads those settings from the unit and its drop-ins (in order,
later files after earlier ones, as systemd merges them), resolves the @groups with
`systemd-analyze syscall-filter` (so the sets are this host's systemd's own), loads the same
program with libseccomp's Python binding and execs the command: the test of
packaging/wirespeed.service runs the agent through it, because a container has no systemd to
start the unit.

What it follows of systemd (systemd.exec(5)):
- SystemCallFilter=: the first non-empty setting decides the mode. An allow list starts from
  @default; later plain settings add calls, later `~` settings take them out again. A deny list
  is the reverse. An empty setting resets.
- SystemCallErrorNumber=: the errno a refused call returns; without it the process is killed
  (SIGSYS), which is what the unit did before it set EPERM.
- SystemCallArchitectures=native: only this architecture's calls (libseccomp's default).
- RestrictAddressFamilies=: socket() with a family outside the list fails with EAFNOSUPPORT.
- MemoryDenyWriteExecute=yes: no mapping both writable and executable, no mprotect to
  executable: EPERM.
Not reproduced (each restricts calls the agent does not make or that the filter already
refuses): RestrictNamespaces=, RestrictRealtime=, LockPersonality=, ProtectClock=,
ProtectKernel*=, and the unit's non-seccomp settings (users, mounts, capabilities: run the
command under setpriv for those).

Usage: unit-seccomp.py UNIT [--drop-in FILE]... -- COMMAND [ARG]...
"""

import errno
import os
import socket
import subprocess
import sys

import seccomp

# Address families are small integers (AF_MAX is 46 in Linux 6.x); every value below this
# bound that the unit does not allow gets its own refusal, and anything above is refused too.
FAMILY_BOUND = 64
MAX_UNIT_BYTES = 1 << 20


def fail(message):
    print(f"unit-seccomp.py: {message}", file=sys.stderr)
    sys.exit(2)


def settings(paths):
    """The [Service] assignments of the unit and its drop-ins, in the order systemd reads them."""
    out = []
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read(MAX_UNIT_BYTES + 1)
        except OSError as e:
            fail(f"cannot read {path}: {e.strerror}: name the unit file and its drop-ins")
        if len(text) > MAX_UNIT_BYTES:
            fail(f"{path} is larger than {MAX_UNIT_BYTES} bytes: not a unit file")
        section = None
        for line in text.splitlines():
            line = line.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("["):
                section = line
                continue
            if section != "[Service]" or "=" not in line:
                continue
            key, value = line.split("=", 1)
            out.append((key.strip(), value.strip()))
    return out


def group(name, seen=None):
    """The calls of a systemd @group, nested groups included, as this host's systemd has them."""
    seen = seen if seen is not None else set()
    if name in seen:
        return set()
    seen.add(name)
    try:
        listing = subprocess.run(
            ["systemd-analyze", "syscall-filter", name],
            capture_output=True, text=True, check=True, timeout=30,
        ).stdout
    except (OSError, subprocess.SubprocessError) as e:
        fail(f"systemd-analyze syscall-filter {name} failed ({e}): install systemd")
    calls = set()
    for line in listing.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or line == name:
            continue
        calls |= group(line, seen) if line.startswith("@") else {line}
    if not calls:
        fail(f"systemd-analyze knows no group {name}: check the unit's SystemCallFilter=")
    return calls


def names(value):
    calls = set()
    for word in value.split():
        word = word.split(":", 1)[0]  # a per-call errno ("name:EPERM") is not used by the unit
        calls |= group(word) if word.startswith("@") else {word}
    return calls


def syscall_filter(assignments):
    mode, calls = None, set()
    for key, value in assignments:
        if key != "SystemCallFilter":
            continue
        if not value:
            mode, calls = None, set()
            continue
        deny = value.startswith("~")
        listed = names(value[1:] if deny else value)
        if mode is None:
            mode = "deny" if deny else "allow"
            calls = set() if deny else group("@default")
        if (mode == "allow") != deny:
            calls |= listed
        else:
            calls -= listed
    return mode, calls


def families(assignments):
    mode, listed = None, set()
    for key, value in assignments:
        if key != "RestrictAddressFamilies":
            continue
        if not value:
            mode, listed = None, set()
            continue
        deny = value.startswith("~")
        words = (value[1:] if deny else value).split()
        numbers = set()
        for word in words:
            number = getattr(socket, word, None)
            if not word.startswith("AF_") or not isinstance(number, int):
                fail(f"RestrictAddressFamilies= names {word!r}, not an address family")
            numbers.add(int(number))
        if mode is None:
            mode = "deny" if deny else "allow"
        if (mode == "allow") != deny:
            listed |= numbers
        else:
            listed -= numbers
    if mode is None:
        return None
    every = set(range(FAMILY_BOUND))
    return (every & listed) if mode == "allow" else (every - listed)


def last(assignments, key, default=None):
    value = default
    for k, v in assignments:
        if k == key:
            value = v
    return value


def build(assignments):
    refusal = last(assignments, "SystemCallErrorNumber")
    if refusal is None or refusal == "kill":
        refused = seccomp.KILL_PROCESS
    else:
        number = getattr(errno, refusal, None)
        if not isinstance(number, int):
            fail(f"SystemCallErrorNumber={refusal} is not an errno name (e.g. EPERM)")
        refused = seccomp.ERRNO(number)
    arches = last(assignments, "SystemCallArchitectures", "native")
    if arches not in ("native", ""):
        fail(f"SystemCallArchitectures={arches}: only native is reproduced here")
    mode, calls = syscall_filter(assignments)
    allowed_families = families(assignments)
    mdwe = last(assignments, "MemoryDenyWriteExecute", "no") in ("yes", "true", "1", "on")

    default = refused if mode == "allow" else seccomp.ALLOW
    f = seccomp.SyscallFilter(default)
    known = set()
    for call in calls:
        try:
            number = seccomp.resolve_syscall(seccomp.Arch.NATIVE, call)
        except (ValueError, RuntimeError):
            continue
        # A call this architecture or this libseccomp does not know (negative: systemd is
        # newer than libseccomp) cannot be made here; systemd skips those too.
        if number >= 0:
            known.add(call)
    # Calls that get argument rules below are not allowed outright.
    special = {"socket"} if allowed_families is not None else set()
    if mdwe:
        special |= {"mmap", "mprotect", "pkey_mprotect"}
    for call in sorted(known):
        if mode == "allow" and call not in special:
            f.add_rule(seccomp.ALLOW, call)
        elif mode == "deny":
            f.add_rule(refused, call)
    passes = (lambda call: call in known) if mode == "allow" else (lambda call: call not in known)

    def rule(action, call, *args):
        # libseccomp refuses a rule whose action is the default one; it is implied then.
        if action != default:
            f.add_rule(action, call, *args)
    if allowed_families is not None and passes("socket"):
        for family in range(FAMILY_BOUND):
            action = seccomp.ALLOW if family in allowed_families else seccomp.ERRNO(errno.EAFNOSUPPORT)
            rule(action, "socket", seccomp.Arg(0, seccomp.EQ, family))
        rule(seccomp.ERRNO(errno.EAFNOSUPPORT), "socket", seccomp.Arg(0, seccomp.GE, FAMILY_BOUND))
    if mdwe:
        import mmap
        wx = mmap.PROT_WRITE | mmap.PROT_EXEC
        if passes("mmap"):
            for prot in (0, mmap.PROT_WRITE, mmap.PROT_EXEC):
                rule(seccomp.ALLOW, "mmap", seccomp.Arg(2, seccomp.MASKED_EQ, wx, prot))
            rule(seccomp.ERRNO(errno.EPERM), "mmap", seccomp.Arg(2, seccomp.MASKED_EQ, wx, wx))
        for call, arg in (("mprotect", 2), ("pkey_mprotect", 2)):
            if passes(call):
                rule(seccomp.ALLOW, call, seccomp.Arg(arg, seccomp.MASKED_EQ, mmap.PROT_EXEC, 0))
                rule(seccomp.ERRNO(errno.EPERM), call,
                           seccomp.Arg(arg, seccomp.MASKED_EQ, mmap.PROT_EXEC, mmap.PROT_EXEC))
    return f


def main(argv):
    if "--" not in argv or argv.index("--") == len(argv) - 1:
        fail("usage: unit-seccomp.py UNIT [--drop-in FILE]... -- COMMAND [ARG]...")
    split = argv.index("--")
    ours, command = argv[:split], argv[split + 1:]
    if not ours or ours[0].startswith("-"):
        fail("name the unit file first: unit-seccomp.py UNIT [--drop-in FILE]... -- COMMAND")
    paths = [ours[0]]
    rest = ours[1:]
    while rest:
        if rest[0] != "--drop-in" or len(rest) < 2:
            fail(f"unexpected {rest[0]!r}: only --drop-in FILE may follow the unit")
        paths.append(rest[1])
        rest = rest[2:]
    build(settings(paths)).load()  # sets no_new_privs first, as NoNewPrivileges=yes does
    try:
        os.execvp(command[0], command)
    except OSError as e:
        fail(f"cannot run {command[0]}: {e.strerror}")


if __name__ == "__main__":
    main(sys.argv[1:])
