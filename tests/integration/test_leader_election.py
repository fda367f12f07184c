"""Preferred and unclean leader elections in a cluster of three combined
nodes (issue 15 item 6): ElectLeaders (API 43) through `samsa election`, as
kafka-leader-election.sh runs it, and auto.leader.rebalance.enable.

The scene in both tests: an RF=3 topic whose partition 0 prefers node X
(its first replica); kill -9 of X moves the leadership to another ISR
member; X restarts and rejoins the ISR, but leads nothing. Then:
- with the rebalance off, `samsa election --preferred` (asked of a node that
  is not necessarily the controller, which forwards it) gives every partition
  back to its preferred replica, as every node's Metadata shows; asked again,
  nothing needs electing; an unknown partition is answered as such;
- with leader.imbalance.check.interval.seconds=1, the controller does the
  same by itself.
An unclean election is refused for a partition that has a leader
(ELECTION_NOT_NEEDED).

Every server listens on 127.0.0.1 and is stopped by PID; every wait has a bound.
"""

import pytest

from cluster_harness import (TIMEOUT_S, admin_for, controller_of, create_with_admin, running_cluster, same_everywhere,
                             topic_view, wait_for_brokers, wait_until)
from clients import samsa

TOPIC = "elect"


def ready(nodes):
    wait_for_brokers(nodes, {1, 2, 3})
    wait_until("an active controller", lambda: controller_of(nodes))
    return nodes


@pytest.fixture
def cluster_without_rebalance(request, tmp_path):
    with running_cluster(request, tmp_path, {"auto.leader.rebalance.enable": "false"}) as nodes:
        yield ready(nodes)


@pytest.fixture
def cluster_with_fast_rebalance(request, tmp_path):
    with running_cluster(request, tmp_path, {"leader.imbalance.check.interval.seconds": "1"}) as nodes:
        yield ready(nodes)


def all_preferred(view):
    return all(leader == replicas[0] for (_e, leader, replicas, _isr) in view.values())


def full_isr(view):
    return all(sorted(isr) == sorted(replicas) for (_e, _l, replicas, isr) in view.values())


def leadership_moved_off_and_back_in_isr(nodes):
    """Creates the topic, kills partition 0's preferred replica X, restarts it
    and waits until it is back in every ISR. Returns (X, the view then)."""
    create_with_admin(admin_for(nodes), TOPIC, partitions=3, rf=3)
    view = wait_until("the topic with a full ISR on every node",
                      lambda: (v := same_everywhere(nodes, TOPIC)) and full_isr(v) and all_preferred(v) and v)
    preferred = view[0][2][0]
    victim = next(n for n in nodes if n.node_id == preferred)
    others = [n for n in nodes if n is not victim]
    victim.kill9()
    wait_until(f"partition 0 led by another node than {preferred}",
               lambda: all((v := topic_view(n, TOPIC)) and v[0][1] not in (-1, preferred) for n in others))
    victim.start()
    view = wait_until(f"node {preferred} back in every ISR",
                      lambda: (v := same_everywhere(nodes, TOPIC)) and full_isr(v) and v)
    return victim, others, view


def test_a_preferred_election_gives_leadership_back(cluster_without_rebalance):
    nodes = cluster_without_rebalance
    victim, others, view = leadership_moved_off_and_back_in_isr(nodes)
    assert view[0][1] != victim.node_id, "the rebalance is off: nothing gives the leadership back by itself"
    moved = sorted(p for p, (_e, leader, replicas, _isr) in view.items() if leader != replicas[0])

    out = samsa("election", "--bootstrap-server", others[0].bootstrap, "--preferred", "--all-topic-partitions")
    text = out.stdout.decode()
    assert "Successfully completed leader election (PREFERRED) for partitions" in text, text
    for p in moved:
        assert f"{TOPIC}-{p}" in text, text
    wait_until("every partition led by its preferred replica on every node",
               lambda: (v := same_everywhere(nodes, TOPIC)) and all_preferred(v))

    again = samsa("election", "-b", victim.bootstrap, "--election-type", "preferred", "--topic", TOPIC,
                  "--partition", "0")
    assert f"Valid replica already elected for partitions {TOPIC}-0" in again.stdout.decode()
    unclean = samsa("election", "-b", victim.bootstrap, "--unclean", "--topic", TOPIC, "--partition", "1")
    assert f"Valid replica already elected for partitions {TOPIC}-1" in unclean.stdout.decode()

    unknown = samsa("election", "-b", others[1].bootstrap, "--preferred", "--topic", "no-such-topic",
                    "--partition", "0", check=False)
    assert unknown.returncode == 1
    assert "UNKNOWN_TOPIC_OR_PARTITION" in unknown.stderr.decode()
    usage = samsa("election", "-b", victim.bootstrap, "--preferred", "--unclean", "--all-topic-partitions",
                  check=False)
    assert usage.returncode == 2


def test_the_controller_rebalances_leadership_by_itself(cluster_with_fast_rebalance):
    nodes = cluster_with_fast_rebalance
    leadership_moved_off_and_back_in_isr(nodes)
    view = wait_until("every partition back with its preferred replica on every node",
                      lambda: (v := same_everywhere(nodes, TOPIC)) and all_preferred(v) and v, timeout_s=TIMEOUT_S)
    assert full_isr(view)
