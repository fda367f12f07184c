// Controller against a fake MetadataLog whose commits the test releases by
// hand: planning sees the records in flight, callbacks complete on commit,
// leadership loss, a storage failure and a timeout.
#include "controller/quorum_controller.h"

#include <gtest/gtest.h>

#include <deque>

#include "testing/sim_runtime.h"
#include "testing/sim_world.h"

namespace samsa {
namespace {

using protocol::ErrorCode;

class FakeMetadataLog final : public MetadataLog {
 public:
  struct Proposal {
    uint64_t tag;
    std::vector<MetadataRecord> records;
    ProposeDone done;
  };

  bool active() const override { return active_; }
  void propose(uint64_t tag, std::vector<MetadataRecord> records, ProposeDone done) override {
    if (!active_) return done(not_controller("fake: not active"));
    proposals.push_back(Proposal{tag, std::move(records), std::move(done)});
  }
  Status shutdown() override { return ok_status(); }

  // The oldest proposal commits.
  void commit_next() {
    Proposal p = std::move(proposals.front());
    proposals.pop_front();
    publish(++offset_, p.records, p.tag);
    p.done(offset_);
  }
  // Another leader's batch commits (this node follows it).
  void commit_foreign(const std::vector<MetadataRecord>& records) { publish(++offset_, records, 0); }
  // Leadership is lost: every proposal fails with NOT_CONTROLLER.
  void lose_leadership() {
    active_ = false;
    while (!proposals.empty()) {
      Proposal p = std::move(proposals.front());
      proposals.pop_front();
      p.done(not_controller("fake: resigned"));
    }
  }
  void fail_next(Error error) {
    Proposal p = std::move(proposals.front());
    proposals.pop_front();
    p.done(std::move(error));
  }
  void set_active(bool active) { active_ = active; }

  std::deque<Proposal> proposals;

 private:
  bool active_ = true;
  Offset offset_{-1};
};

// What a callback received; unset until it is called.
struct Outcome {
  bool called = false;
  std::optional<ControllerError> error;
  ControllerDone fn() {
    return [this](std::optional<ControllerError> e) {
      ASSERT_FALSE(called) << "a callback called twice";
      called = true;
      error = std::move(e);
    };
  }
  ErrorCode code() const { return error ? error->code : ErrorCode::kNone; }
};

class ControllerTest : public ::testing::Test {
 protected:
  ControllerTest() : world_(1), host_(world_.add_host()), controller_(world_.runtime(host_), log_) {
    auto unfenced = [](int id) {
      return RegisterBrokerRecord{NodeId(id), BrokerEpoch(0), {}, {{"PLAINTEXT", "h", uint16_t(id), 0}}, std::nullopt, false};
    };
    log_.commit_foreign({unfenced(1), unfenced(2)});
  }

  void create(const std::string& name, int32_t partitions, Outcome& outcome, int64_t timeout_ms = 0) {
    NewTopic topic{name, partitions, 1, {}, {}};
    controller_.submit("create " + name, [this, topic](const MetadataImage& view) {
      return plan_create_topic(view, topic, TopicDefaults{}, limits_, rng_);
    }, timeout_ms, outcome.fn());
  }

  sim::SimWorld world_;
  sim::HostId host_;
  FakeMetadataLog log_;
  Controller controller_;
  Rng rng_{3};
  PartitionLimits limits_{10000, 10000, 5};
};

TEST_F(ControllerTest, AnswersWhenTheRecordsCommitAndPlansAgainstTheRecordsInFlight) {
  Outcome first;
  create("t", 2, first);
  EXPECT_FALSE(first.called);  // proposed, not committed
  EXPECT_EQ(controller_.in_flight(), 1u);
  EXPECT_EQ(log_.image().topic("t"), nullptr);
  ASSERT_NE(controller_.view().topic("t"), nullptr);

  // The same name while the first is in flight: already exists.
  Outcome again;
  create("t", 1, again);
  ASSERT_TRUE(again.called);
  EXPECT_EQ(again.code(), ErrorCode::kTopicAlreadyExists);

  // Placement and limits see the in-flight partitions: 2 + 3 = 5 fits
  // max.partitions = 5, then one more does not.
  Outcome second;
  create("u", 3, second);
  EXPECT_FALSE(second.called);
  Outcome over;
  create("v", 1, over);
  ASSERT_TRUE(over.called);
  EXPECT_EQ(over.code(), ErrorCode::kPolicyViolation);

  log_.commit_next();
  ASSERT_TRUE(first.called);
  EXPECT_EQ(first.code(), ErrorCode::kNone);
  EXPECT_NE(log_.image().topic("t"), nullptr);  // committed before the answer
  EXPECT_FALSE(second.called);
  log_.commit_next();
  ASSERT_TRUE(second.called);
  EXPECT_EQ(second.code(), ErrorCode::kNone);
  EXPECT_EQ(controller_.in_flight(), 0u);
  EXPECT_EQ(&controller_.view(), &log_.image());  // nothing in flight: the view is the image
}

TEST_F(ControllerTest, NotTheActiveControllerIsRefusedAtOnce) {
  log_.set_active(false);
  Outcome outcome;
  create("t", 1, outcome);
  ASSERT_TRUE(outcome.called);
  EXPECT_EQ(outcome.code(), ErrorCode::kNotController);
  EXPECT_TRUE(log_.proposals.empty());
  EXPECT_EQ(std::get<ControllerError>(controller_.dry_run([](const MetadataImage&) { return Plan{}; })).code,
            ErrorCode::kNotController);
}

TEST_F(ControllerTest, LeadershipLostBeforeCommitFailsEveryChangeInFlightAndForgetsThem) {
  Outcome a, b;
  create("a", 1, a);
  create("b", 1, b);
  log_.lose_leadership();
  ASSERT_TRUE(a.called && b.called);
  EXPECT_EQ(a.code(), ErrorCode::kNotController);
  EXPECT_EQ(b.code(), ErrorCode::kNotController);
  EXPECT_EQ(controller_.in_flight(), 0u);
  EXPECT_EQ(controller_.view().topic("a"), nullptr);  // the view is the committed image again

  // The new leader created "a" its own way; leading again, we plan on that.
  log_.commit_foreign({TopicRecord{"a", Uuid{{1}}}});
  log_.set_active(true);
  Outcome again;
  create("a", 1, again);
  EXPECT_EQ(again.code(), ErrorCode::kTopicAlreadyExists);
}

TEST_F(ControllerTest, AnotherLeadersBatchWhileInFlightDropsOursFromTheView) {
  Outcome mine;
  create("mine", 1, mine);
  log_.commit_foreign({TopicRecord{"theirs", Uuid{{2}}}});
  EXPECT_EQ(controller_.view().topic("mine"), nullptr);
  EXPECT_NE(controller_.view().topic("theirs"), nullptr);
  EXPECT_FALSE(mine.called);  // the log still owes the answer
  log_.lose_leadership();
  EXPECT_EQ(mine.code(), ErrorCode::kNotController);
}

TEST_F(ControllerTest, AStorageFailureIsKafkaStorageError) {
  Outcome outcome;
  create("t", 1, outcome);
  log_.fail_next(Error(ErrorKind::kIo, "fsync: EIO"));
  ASSERT_TRUE(outcome.called);
  EXPECT_EQ(outcome.code(), ErrorCode::kKafkaStorageError);
  EXPECT_EQ(controller_.view().topic("t"), nullptr);
}

TEST_F(ControllerTest, TimesOutWithRequestTimedOutAndTheRecordsMayStillCommit) {
  Outcome outcome;
  create("t", 1, outcome, 500);
  world_.run_for_ms(499);
  EXPECT_FALSE(outcome.called);
  world_.run_for_ms(2);
  ASSERT_TRUE(outcome.called);
  EXPECT_EQ(outcome.code(), ErrorCode::kRequestTimedOut);
  // Still in flight: a retry meanwhile finds the name taken.
  Outcome retry;
  create("t", 1, retry);
  EXPECT_EQ(retry.code(), ErrorCode::kTopicAlreadyExists);
  log_.commit_next();  // commits late; the callback is not called again
  EXPECT_NE(log_.image().topic("t"), nullptr);
  EXPECT_EQ(controller_.in_flight(), 0u);
}

TEST_F(ControllerTest, ACommitBeforeTheTimeoutCancelsIt) {
  Outcome outcome;
  create("t", 1, outcome, 500);
  log_.commit_next();
  EXPECT_EQ(outcome.code(), ErrorCode::kNone);
  world_.run_for_ms(1000);  // the timer does not fire a second answer (Outcome asserts)
}

TEST_F(ControllerTest, AnEmptyPlanOrARefusalProposesNothing) {
  Outcome empty;
  controller_.submit("nothing", [](const MetadataImage&) { return Plan(std::vector<MetadataRecord>{}); }, 0,
                     empty.fn());
  EXPECT_TRUE(empty.called);
  EXPECT_EQ(empty.code(), ErrorCode::kNone);
  Outcome bad;
  create("bad name", 1, bad);
  EXPECT_EQ(bad.code(), ErrorCode::kInvalidTopicException);
  EXPECT_TRUE(log_.proposals.empty());
}

TEST_F(ControllerTest, DestroyedWithChangesInFlightDropsTheirCallbacks) {
  Outcome outcome;
  {
    Controller second(world_.runtime(host_), log_);
    NewTopic topic{"x", 1, 1, {}, {}};
    second.submit("x", [&](const MetadataImage& view) {
      return plan_create_topic(view, topic, TopicDefaults{}, limits_, rng_);
    }, 100, outcome.fn());
  }
  world_.run_for_ms(200);  // its timer was cancelled
  while (!log_.proposals.empty()) log_.commit_next();  // the log's late answer reaches nobody
  EXPECT_FALSE(outcome.called);
}

}  // namespace
}  // namespace samsa
