#!/usr/bin/python3
"""check_layering.py catches what it is for: each case copies the repository's
src/ and CMake files into a temporary folder, breaks one rule there, and
expects the checker to fail naming that rule. The unchanged copy must pass
(so a case fails for its own break, not for an existing one).

    check_layering_test.py SOURCE_ROOT
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKER = os.path.join(HERE, 'check_layering.py')
ROOT = None  # set by main


def copy_tree(dest):
    shutil.copytree(os.path.join(ROOT, 'src'), os.path.join(dest, 'src'))
    shutil.copytree(os.path.join(ROOT, 'cmake'), os.path.join(dest, 'cmake'))
    shutil.copy(os.path.join(ROOT, 'CMakeLists.txt'), dest)
    for top in ('tests', 'bench'):
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            if 'CMakeLists.txt' in files:
                target = os.path.join(dest, os.path.relpath(dirpath, ROOT))
                os.makedirs(target, exist_ok=True)
                shutil.copy(os.path.join(dirpath, 'CMakeLists.txt'), target)


def edit(root, rel, change):
    path = os.path.join(root, rel)
    with open(path) as f:
        text = f.read()
    new = change(text)
    assert new != text, f'{rel}: the edit changed nothing'
    with open(path, 'w') as f:
        f.write(new)


def add_include(line):
    # After the file's first #include, so the rest of the file is untouched.
    return lambda text: re.sub(r'^(#include [^\n]*\n)', lambda m: m.group(1) + line + '\n', text, count=1,
                               flags=re.M)


def run_checker(root):
    p = subprocess.run([sys.executable, CHECKER, root], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout


class CheckLayering(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix='samsa-layering-')
        copy_tree(self.tmp)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def assert_fails_with(self, expected):
        code, out = run_checker(self.tmp)
        self.assertEqual(code, 1, out)
        self.assertIn(expected, out)

    def test_unchanged_copy_passes(self):
        code, out = run_checker(self.tmp)
        self.assertEqual(code, 0, out)

    def test_lower_layer_including_a_higher_one(self):
        edit(self.tmp, 'src/storage/log.cc', add_include('#include "broker/broker.h"'))
        self.assert_fails_with('src/storage/log.cc: #include "broker/broker.h": storage may not depend on broker')

    def test_broker_including_the_process_entry(self):
        edit(self.tmp, 'src/broker/broker.h', add_include('#include "server/run_server.h"'))
        self.assert_fails_with('broker may not depend on server')

    def test_include_of_an_undeclared_layer(self):
        edit(self.tmp, 'src/group/group.cc', add_include('#include "model/ids.h"'))
        self.assert_fails_with('samsa_model is not in the DEPS of src/group/CMakeLists.txt')

    def test_declared_dependency_never_included(self):
        edit(self.tmp, 'src/group/CMakeLists.txt', lambda t: t.replace('DEPS samsa_protocol', 'DEPS samsa_model samsa_protocol'))
        self.assert_fails_with('DEPS samsa_model, but no product file of group includes model/')

    def test_pure_core_including_a_system_header(self):
        edit(self.tmp, 'src/raft/raft_node.cc', add_include('#include <thread>'))
        self.assert_fails_with('src/raft/raft_node.cc: #include <thread>: a pure core')

    def test_pure_core_calling_the_file_system(self):
        edit(self.tmp, 'src/group/group.cc', lambda t: t + '\nnamespace { bool probe() { return std::filesystem::exists("x"); } }\n')
        self.assert_fails_with('"std::filesystem": a pure core does no I/O')

    def test_pure_core_calling_posix_open_qualified(self):
        edit(self.tmp, 'src/group/group.cc', lambda t: t + '\nnamespace { int probe() { return ::open("x", 0); } }\n')
        self.assert_fails_with('"open(": a pure core does no I/O')

    def test_pure_core_may_call_a_member_named_open(self):
        # RecordIterator::open decodes bytes in memory: not the OS's open().
        edit(self.tmp, 'src/group/group.cc', lambda t: t + '\nnamespace { int probe() { return Parser::open(1); } }\n')
        code, out = run_checker(self.tmp)
        self.assertEqual(code, 0, out)

    def test_replication_core_reading_storage(self):
        edit(self.tmp, 'src/replication/replication_core.cc', add_include('#include "storage/log.h"'))
        self.assert_fails_with('src/replication/replication_core.cc: #include "storage/log.h": a pure core does no I/O')

    def test_decision_part_of_controller_reading_storage(self):
        edit(self.tmp, 'src/controller/topic_planner.cc', add_include('#include "storage/log.h"'))
        self.assert_fails_with('src/controller/topic_planner.cc: #include "storage/log.h": a pure core does no I/O')

    def test_product_linking_testing(self):
        edit(self.tmp, 'src/broker/CMakeLists.txt', lambda t: t.replace('DEPS samsa_group', 'DEPS samsa_testing samsa_group'))
        self.assert_fails_with('samsa_broker links samsa_testing; only tests and samsa-sim may')

    def test_benchmark_binary_linking_testing(self):
        edit(self.tmp, 'bench/CMakeLists.txt', lambda t: t.replace('PRIVATE samsa_io', 'PRIVATE samsa_testing samsa_io', 1))
        self.assert_fails_with('samsa-null-broker links samsa_testing; only tests and samsa-sim may')

    def test_samsa_binary_linking_a_layer_it_may_not(self):
        edit(self.tmp, 'src/cli/CMakeLists.txt', lambda t: t.replace('PRIVATE samsa_cli', 'PRIVATE samsa_storage samsa_cli', 1))
        self.assert_fails_with('samsa links samsa_storage (allowed: broker, cli, server)')

    def test_test_including_a_higher_layer(self):
        edit(self.tmp, 'src/storage/log_test.cc', add_include('#include "broker/replica_manager.h"'))
        self.assert_fails_with('src/storage/log_test.cc: #include "broker/replica_manager.h": storage may not depend on broker')

    def test_readme_out_of_date(self):
        edit(self.tmp, 'src/storage/README.md', lambda t: t.replace('Depends on:', 'Depends on: `raft`,', 1))
        self.assert_fails_with('src/storage/README.md: "Depends on:" names')

    def test_storage_including_a_posix_header(self):
        edit(self.tmp, 'src/storage/segment.cc', add_include('#include <fcntl.h>'))
        self.assert_fails_with('src/storage/segment.cc: #include <fcntl.h>: storage/ reaches files, threads and the OS '
                               'only through io/')

    def test_broker_starting_a_thread(self):
        edit(self.tmp, 'src/broker/broker.h', add_include('#include <thread>'))
        self.assert_fails_with('src/broker/broker.h: #include <thread>: broker/ reaches files')

    def test_controller_reading_with_stdio(self):
        edit(self.tmp, 'src/controller/local_metadata_log.cc', add_include('#include <cstdio>'))
        self.assert_fails_with('src/controller/local_metadata_log.cc: #include <cstdio>: controller/ reaches files')

    def test_storage_test_may_use_posix(self):
        edit(self.tmp, 'src/storage/log_test.cc', add_include('#include <fcntl.h>'))
        code, out = run_checker(self.tmp)
        self.assertEqual(code, 0, out)

    def test_include_without_its_folder(self):
        edit(self.tmp, 'src/storage/segment.cc', add_include('#include "log.h"'))
        self.assert_fails_with('#include "log.h": name the folder')


def main():
    global ROOT
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    ROOT = os.path.abspath(sys.argv.pop(1))
    return 0 if unittest.main(exit=False, verbosity=1).result.wasSuccessful() else 1


if __name__ == '__main__':
    sys.exit(main())
