#!/usr/bin/python3
"""The layering of src/, checked (docs/design.md, "Layers" and "Rules").

    check_layering.py SOURCE_ROOT

Reads the CMake files (samsa_library DEPS / TEST_DEPS, executables and what
they link) and the #include lines of every file under src/, and prints one
line per broken rule; exit status 1 if there is any. Rules:

  1. LAYERS below is the design: for each folder of src/, the folders it may
     depend on. It is acyclic and ordered: a layer only names layers before it
     in the table, so a lower layer never includes a higher one.
  2. A library's CMake DEPS stay inside its LAYERS row, and are its real
     dependencies: every folder a product file includes is declared, and every
     declared layer is included by some product file.
  3. A *_test.cc (and the test-only headers test_*.h, *_test_support.h) may
     include its own layer, its DEPS and its TEST_DEPS; TEST_DEPS may name any
     layer of the LAYERS row plus testing/ (the simulator and fixtures). A
     product file never includes a test-only header, gtest or gmock.
  4. A *_main.cc belongs to the executable that compiles it, which links only
     what BINARIES allows; it may include anything that executable links,
     directly or through DEPS.
  5. The pure cores (PURE_CORES: protocol, raft, the decision parts of
     controller/, group/ and replication/) do no I/O: no include of io/ or storage/, no
     system or threading header (FORBIDDEN_IN_PURE), no file, socket, thread
     or clock call (FORBIDDEN_CALLS_IN_PURE). Their tests may (they read data
     files).
  6. Nothing in the product links testing/: only test binaries (*_test, or
     any target defined under tests/) and samsa-sim name samsa_testing.
  7. Every quoted include names its folder ("storage/log.h", never "log.h").
  8. Each src/<layer>/README.md exists and its "Depends on:" line names
     exactly the layer's DEPS, so the per-folder documentation stays true.
  9. The layers above io/ (NO_OS_LAYERS: config, storage, controller,
     group, replication, broker) reach files, threads and the OS only
     through io/ (FileSystem, File, BlockingExecutor, Runtime): no
     product file includes a system, stdio, stream or threading header
     (FORBIDDEN_IN_NO_OS). <filesystem> stays allowed for path values; its
     operations (exists, directory_iterator, space, ...) are not checked
     here: FileSystem replaces them, and review keeps them out.
     NO_OS_EXCEPTIONS names the files still waiting, each with its reason.

EXCEPTIONS lists known, accepted edges, each with its reason (empty today).
"""

import os
import re
import sys

# Rule 1: the allowed-dependency table, written once, lowest layer first.
# The CMake DEPS of each library must be a subset of its row (rule 2).
LAYERS = {
    # vocabulary: Result, ASSERT, bytes, crc32c, Clock, Rng, ConfigDef, logging
    'base': set(),
    # ids, record batches, the four compression codecs
    'model': {'base'},
    # the wire codec (generated messages), error codes; a pure core
    'protocol': {'model', 'base'},
    # event loop, sockets, connections, framing, signals
    'io': {'protocol', 'model', 'base'},
    # the broker's configuration (server.properties keys); Endpoint is io's
    'config': {'io', 'model', 'base'},
    # the log: segments, indexes, recovery, retention, compaction; files through io's FileSystem
    'storage': {'io', 'model', 'base'},
    # consensus as a pure state machine
    'raft': {'model', 'base'},
    # the metadata image and decisions (pure); MetadataStore, the driver over storage
    # (and, with a quorum, the driver of raft/ over io/)
    'controller': {'raft', 'storage', 'io', 'protocol', 'model', 'base'},
    # partition state on a broker
    'replication': {'controller', 'storage', 'io', 'protocol', 'model', 'base'},
    # the group coordinator (pure: the broker persists what it returns)
    'group': {'protocol', 'model', 'base'},
    # the service: dispatcher, handlers, wiring of every layer below
    'broker': {'group', 'replication', 'controller', 'storage', 'config', 'io',
               'protocol', 'model', 'base'},
    # the `samsa server` process: args, config file, listeners, signals; runs broker's Service
    'server': {'broker', 'config', 'io', 'model', 'base'},
    # the client subcommands (librdkafka): never the broker's insides
    'cli': {'storage', 'protocol', 'model', 'base'},
    # the simulator and checkers: test support, linked by tests and samsa-sim only
    'testing': {'broker', 'config', 'controller', 'replication', 'raft', 'storage', 'io', 'protocol', 'model', 'base'},
}

# Rule 4: executables built from src/*/*_main.cc and the layers they may link.
BINARIES = {
    'samsa': {'cli', 'server', 'broker'},  # `samsa server` runs a Broker; the rest is cli/
    'samsa-sim': {'testing'},
}

# Rule 5: the pure cores, and the files of each that are drivers, not decisions.
PURE_CORES = {
    'protocol': set(),
    'raft': set(),
    # drivers: the single-node metadata log over a storage Log; raft/'s state in the metadata log dir;
    # the RaftNode on a Runtime; the quorum's metadata log over it; the controller's timers;
    # raft messages over the Network (the transport, the controller listener's sink);
    # ClusterControl on the controller's timers and proposals; the rebalance's timer;
    # the metadata-log observer on a Runtime, its fetches over the Network, its metadata log over it
    'controller': {'raft_observer_driver.h', 'raft_observer_driver.cc', 'raft_fetch_client.h', 'raft_fetch_client.cc',
                   'observer_metadata_log.h', 'observer_metadata_log.cc',
                   'cluster_control_service.h', 'cluster_control_service.cc', 'leader_balancer.h', 'leader_balancer.cc', 'local_metadata_log.h', 'local_metadata_log.cc', 'raft_log_storage.h', 'raft_log_storage.cc',
                   'raft_driver.h', 'raft_driver.cc', 'raft_metadata_log.h', 'raft_metadata_log.cc',
                   'quorum_controller.h', 'quorum_controller.cc', 'raft_network_transport.h',
                   'raft_network_transport.cc', 'controller_apis.h', 'controller_apis.cc'},
    'group': set(),
    # drivers: the core over a storage Log; the replica fetchers over io/'s Network
    'replication': {'partition.h', 'partition.cc', 'replica_fetcher.h', 'replica_fetcher.cc'},
}
FORBIDDEN_LAYERS_IN_PURE = {'io', 'storage', 'config'}
FORBIDDEN_IN_PURE = re.compile(
    r'^(sys/.*|unistd\.h|fcntl\.h|dirent\.h|poll\.h|signal\.h|pthread\.h|netdb\.h|'
    r'netinet/.*|arpa/.*|linux/.*|stdio\.h|cstdio|fstream|filesystem|thread|mutex|'
    r'shared_mutex|condition_variable|future|semaphore|chrono|ctime|time\.h|random)$')
FORBIDDEN_CALLS_IN_PURE = re.compile(
    r'\bstd::(filesystem|thread|jthread|this_thread|ifstream|ofstream|fstream|random_device)\b'
    r'|\b(system_clock|steady_clock|high_resolution_clock)\b'
    r'|(?<![\w.>])(?<!\w::)(fopen|getenv|open|read|write|pread|pwrite|close|fsync|sendfile|socket|'
    r'accept|connect|epoll_\w+|time|sleep|usleep)\s*\(')

# Known edges the rules above forbid, accepted for now: {(file, layer): why}.
EXCEPTIONS = {}

# Rule 9: the layers that touch files, threads and the OS only through io/.
NO_OS_LAYERS = {'config', 'storage', 'controller', 'group', 'replication', 'broker'}
FORBIDDEN_IN_NO_OS = re.compile(
    r'^(sys/.*|unistd\.h|fcntl\.h|dirent\.h|fstream|cstdio|stdio\.h|thread|mutex|condition_variable)$')
# Product files of NO_OS_LAYERS allowed a forbidden header for now: {file: why}.
NO_OS_EXCEPTIONS = {}

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def strip_cmake_comments(text):
    return re.sub(r'#[^\n]*', '', text)


def cmake_commands(text):
    """(command, [args]) for every command of a CMake file (no nested parens)."""
    for m in re.finditer(r'\b(\w+)\s*\(([^()]*)\)', strip_cmake_comments(text)):
        yield m.group(1), m.group(2).split()


def layer_of(target):
    return target[len('samsa_'):] if target.startswith('samsa_') else None


def read(path):
    with open(path, encoding='utf-8', errors='replace') as f:
        return f.read()


class Repo:
    def __init__(self, root):
        self.root = root
        self.deps = {}        # layer -> set of layers (DEPS)
        self.test_deps = {}   # layer -> set of layers (TEST_DEPS)
        self.exe_links = {}   # executable -> (cmake file, set of linked targets)
        self.main_exe = {}    # src-relative *_main.cc -> executable
        self.testing_links = []  # (cmake file, target) naming samsa_testing
        self._parse_cmake()

    def cmake_files(self):
        for top in ('src', 'tests', 'bench', 'cmake'):
            for dirpath, _, files in os.walk(os.path.join(self.root, top)):
                for f in sorted(files):
                    if f == 'CMakeLists.txt' or f.endswith('.cmake'):
                        yield os.path.join(dirpath, f)
        yield os.path.join(self.root, 'CMakeLists.txt')

    def _parse_cmake(self):
        for path in self.cmake_files():
            rel = os.path.relpath(path, self.root)
            in_tests = rel.startswith('tests' + os.sep)
            for cmd, args in cmake_commands(read(path)):
                if cmd == 'samsa_library' and args:
                    name, section = args[0], None
                    self.deps.setdefault(name, set())
                    self.test_deps.setdefault(name, set())
                    for a in args[1:]:
                        if a in ('DEPS', 'TEST_DEPS'):
                            section = a
                        elif layer_of(a) and section == 'DEPS':
                            self.deps[name].add(layer_of(a))
                            if a == 'samsa_testing':
                                self.testing_links.append((rel, 'samsa_' + name))
                        elif layer_of(a) and section == 'TEST_DEPS':
                            self.test_deps[name].add(layer_of(a))
                            if a == 'samsa_testing':
                                self.testing_links.append((rel, name + '_test'))
                elif cmd == 'add_executable' and args and rel.startswith('src' + os.sep):
                    folder = os.path.dirname(os.path.relpath(path, os.path.join(self.root, 'src')))
                    for src in args[1:]:
                        if src.endswith('_main.cc'):
                            self.main_exe[os.path.join(folder, src)] = args[0]
                    self.exe_links.setdefault(args[0], (rel, set()))
                elif cmd == 'target_link_libraries' and args:
                    target = args[0]
                    linked = {a for a in args[1:] if layer_of(a)}
                    if 'samsa_testing' in linked:
                        self.testing_links.append((rel, target if not in_tests else 'tests:' + target))
                    if target in self.exe_links:
                        self.exe_links[target][1].update(layer_of(a) for a in linked)

    def closure(self, layers):
        seen, todo = set(), list(layers)
        while todo:
            layer = todo.pop()
            if layer not in seen:
                seen.add(layer)
                todo.extend(self.deps.get(layer, ()))
        return seen


def is_test_file(name):
    return name.endswith('_test.cc') or name.startswith('test_') or name.endswith('_test_support.h')


def source_files(root):
    src = os.path.join(root, 'src')
    for dirpath, _, files in os.walk(src):
        for f in sorted(files):
            if f.endswith(('.h', '.cc')):
                rel = os.path.relpath(os.path.join(dirpath, f), src)
                yield rel, os.path.join(dirpath, f)


def strip_code_comments_and_strings(text):
    text = re.sub(r'/\*.*?\*/', ' ', text, flags=re.S)
    text = re.sub(r'//[^\n]*', '', text)
    return re.sub(r'"(\\.|[^"\\\n])*"', '""', text)


def check_table(errors):
    order = list(LAYERS)
    for layer, allowed in LAYERS.items():
        for dep in allowed:
            if dep not in LAYERS or order.index(dep) >= order.index(layer):
                errors.append(f'LAYERS: {layer} may depend on {dep}, which is not a lower layer')


def check_folders(repo, errors):
    src = os.path.join(repo.root, 'src')
    folders = {d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d))}
    for d in sorted(folders - set(LAYERS)):
        errors.append(f'src/{d}/: a folder with no row in LAYERS (tests/layering/check_layering.py)')
    for d in sorted(set(LAYERS) - folders):
        errors.append(f'LAYERS names {d}, but src/{d}/ does not exist')
    for d in sorted(folders & set(LAYERS)):
        if d not in repo.deps:
            errors.append(f'src/{d}/: no samsa_library({d} ...) in its CMakeLists.txt')


def check_deps(repo, errors):
    for layer, deps in sorted(repo.deps.items()):
        allowed = LAYERS.get(layer, set())
        for dep in sorted(deps - allowed):
            errors.append(f'src/{layer}/CMakeLists.txt: DEPS samsa_{dep}: {layer} may not depend on {dep} '
                          f'(allowed: {", ".join(sorted(allowed)) or "nothing"})')
        for dep in sorted(repo.test_deps.get(layer, set()) - allowed - {'testing'}):
            errors.append(f'src/{layer}/CMakeLists.txt: TEST_DEPS samsa_{dep}: tests of {layer} may not use {dep}')


def check_includes(repo, errors):
    used = {layer: set() for layer in repo.deps}
    for rel, path in source_files(repo.root):
        layer, name = rel.split(os.sep)[0], os.path.basename(rel)
        if layer not in LAYERS:
            continue
        text = read(path)
        includes = [(m.group(1), m.group(2)) for m in INCLUDE.finditer(text)]
        test, main = is_test_file(name), name.endswith('_main.cc')
        deps = repo.deps.get(layer, set())
        if main:
            exe = repo.main_exe.get(rel)
            if exe is None:
                errors.append(f'src/{rel}: a *_main.cc that no add_executable in src/{layer}/ compiles')
                continue
            reachable = repo.closure({layer} | repo.exe_links[exe][1])
        elif test:
            reachable = {layer} | deps | repo.test_deps.get(layer, set())
        else:
            reachable = {layer} | deps
        for kind, inc in includes:
            top = inc.split('/')[0]
            if kind == '"' and ('/' not in inc or top not in LAYERS):
                errors.append(f'src/{rel}: #include "{inc}": name the folder under src/ ("layer/file.h")')
                continue
            if kind == '<' and top in ('gtest', 'gmock') and not test:
                errors.append(f'src/{rel}: #include <{inc}> in a product file')
            if top not in LAYERS:
                continue
            if is_test_file(os.path.basename(inc)) and not test:
                errors.append(f'src/{rel}: #include "{inc}": a test-only header in a product file')
            if top != layer and not test and not main:
                used.setdefault(layer, set()).add(top)
            if (rel, top) in EXCEPTIONS:
                continue
            permitted = {layer} | LAYERS[layer] | ({'testing'} if test else set())
            if not main and top not in permitted:
                errors.append(f'src/{rel}: #include "{inc}": {layer} may not depend on {top} (LAYERS)')
            elif top not in reachable:
                if main:
                    why = f'{repo.main_exe[rel]} does not link {top}'
                elif test:
                    why = f'samsa_{top} is in neither DEPS nor TEST_DEPS of src/{layer}/CMakeLists.txt'
                else:
                    why = f'allowed by the design, but samsa_{top} is not in the DEPS of src/{layer}/CMakeLists.txt'
                errors.append(f'src/{rel}: #include "{inc}": {why}')
        if layer in PURE_CORES and not test and name not in PURE_CORES[layer]:
            check_pure(rel, includes, text, errors)
        if layer in NO_OS_LAYERS and not test and not main and rel not in NO_OS_EXCEPTIONS:
            check_no_os(rel, includes, errors)
    for layer, deps in sorted(repo.deps.items()):
        for dep in sorted(deps - used.get(layer, set())):
            errors.append(f'src/{layer}/CMakeLists.txt: DEPS samsa_{dep}, but no product file of {layer} includes {dep}/')


def check_pure(rel, includes, text, errors):
    for kind, inc in includes:
        if kind == '"' and inc.split('/')[0] in FORBIDDEN_LAYERS_IN_PURE:
            errors.append(f'src/{rel}: #include "{inc}": a pure core does no I/O')
        if kind == '<' and FORBIDDEN_IN_PURE.match(inc):
            errors.append(f'src/{rel}: #include <{inc}>: a pure core does no I/O, starts no thread, reads no clock')
    code = strip_code_comments_and_strings(text)
    for lineno, line in enumerate(code.split('\n'), 1):
        m = FORBIDDEN_CALLS_IN_PURE.search(line)
        if m:
            errors.append(f'src/{rel}:{lineno}: "{m.group(0).strip()}": a pure core does no I/O')


def check_no_os(rel, includes, errors):
    for kind, inc in includes:
        if kind == '<' and FORBIDDEN_IN_NO_OS.match(inc):
            errors.append(f'src/{rel}: #include <{inc}>: {rel.split(os.sep)[0]}/ reaches files, threads and the OS '
                          f'only through io/ (FileSystem, File, BlockingExecutor)')


def check_binaries(repo, errors):
    for exe, (cmake, links) in sorted(repo.exe_links.items()):
        if exe not in BINARIES:
            continue
        for layer in sorted(links - BINARIES[exe]):
            errors.append(f'{cmake}: {exe} links samsa_{layer} (allowed: {", ".join(sorted(BINARIES[exe]))})')
        if 'testing' in repo.closure(links) and exe != 'samsa-sim':
            errors.append(f'{cmake}: {exe} links samsa_testing through its dependencies')


def check_testing_links(repo, errors):
    for cmake, target in repo.testing_links:
        if target.startswith('tests:') or target.endswith('_test') or target == 'samsa-sim':
            continue
        errors.append(f'{cmake}: {target} links samsa_testing; only tests and samsa-sim may')


def check_readmes(repo, errors):
    for layer in sorted(set(LAYERS) & set(repo.deps)):
        path = os.path.join(repo.root, 'src', layer, 'README.md')
        if not os.path.exists(path):
            errors.append(f'src/{layer}/README.md: missing (what the layer is for, its types, its dependencies)')
            continue
        m = re.search(r'^Depends on:(.*)$', read(path), re.M)
        if not m:
            errors.append(f'src/{layer}/README.md: no "Depends on:" line')
            continue
        named = set(re.findall(r'`([a-z]+)/?`', m.group(1))) & set(LAYERS)
        if named != repo.deps[layer]:
            errors.append(f'src/{layer}/README.md: "Depends on:" names {", ".join(sorted(named)) or "nothing"}; '
                          f'the CMake DEPS are {", ".join(sorted(repo.deps[layer])) or "nothing"}')


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().split('\n\n')[1], file=sys.stderr)
        return 2
    errors = []
    check_table(errors)
    repo = Repo(os.path.abspath(argv[1]))
    check_folders(repo, errors)
    check_deps(repo, errors)
    check_includes(repo, errors)
    check_binaries(repo, errors)
    check_testing_links(repo, errors)
    check_readmes(repo, errors)
    for e in errors:
        print(e)
    if errors:
        print(f'layering: {len(errors)} broken rule(s); the rules are in tests/layering/check_layering.py',
              file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
