// The admin handlers (handlers/create_topics.cc ... describe_cluster.cc)
// driven in-process through Broker::on_frame with requests encoded by our
// codec, at the versions no Debian client sends (flexible CreateTopics v5-7,
// DeleteTopics v6 by id, DescribeConfigs v3-4, IncrementalAlterConfigs,
// DescribeCluster, DeleteRecords v2) as well as the old ones. The real
// clients are exercised in tests/integration/test_admin.py.
#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <optional>

#include "broker/broker.h"
#include "broker/test_commit.h"
#include "broker/group_manager.h"
#include "io/posix_runtime.h"
#include "model/record_batch_builder.h"
#include "io/posix_file_system.h"
#include "io/test_runtime_with_files.h"
#include "storage/test_faulty_file_system.h"
#include "protocol/generated/alter_configs.h"
#include "protocol/generated/create_partitions.h"
#include "protocol/generated/create_topics.h"
#include "protocol/generated/delete_records.h"
#include "protocol/generated/delete_topics.h"
#include "protocol/generated/describe_cluster.h"
#include "protocol/generated/describe_configs.h"
#include "protocol/generated/incremental_alter_configs.h"
#include "protocol/generated/metadata.h"
#include "protocol/request_header.h"
#include "protocol/response_header.h"

namespace samsa {
namespace {

namespace fs = std::filesystem;
using namespace protocol;

constexpr int8_t kTopicResource = 2;
constexpr int8_t kBrokerResource = 4;

class AdminHandlersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "samsa-admin-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    stop();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  void start(std::map<std::string, std::string> props = {}) {
    props.emplace("log.dirs", (dir_ / "logs").string());
    props.emplace("listeners", "PLAINTEXT://127.0.0.1:9092");
    // One broker, as `samsa server` without a config file runs it.
    for (const auto& [key, value] : BrokerConfig::single_node_defaults()) props.emplace(key, value);
    auto config = BrokerConfig::from_properties(props);
    ASSERT_TRUE(config.ok()) << config.error().to_string();
    config_ = std::move(config).value();
    auto runtime = PosixRuntime::create(/*seed=*/7);
    ASSERT_TRUE(runtime.ok());
    loop_ = std::move(runtime).value();
    files_ = std::make_unique<test::FaultyFileSystem>(posix_);
    runtime_ = std::make_unique<test::RuntimeWithFiles>(*loop_, *files_);
    broker_ = std::make_unique<Broker>();
    Status started = broker_->start(*runtime_, *config_);
    ASSERT_TRUE(started.ok()) << started.error().to_string();
  }
  void stop() {
    if (broker_) broker_->shutdown();
    broker_.reset();
    runtime_.reset();
    files_.reset();
    loop_.reset();
  }

  // Sends one request through on_frame and decodes the reply, checking the
  // framing (size, correlation id, header version) and that the body is
  // consumed exactly.
  template <typename Response, typename Req>
  Response call(const Req& req, int16_t version) {
    RequestHeader header;
    header.api_key = int16_t(Req::kApiKey);
    header.api_version = version;
    header.correlation_id = ++correlation_id_;
    header.client_id = "admin-test";
    OutBuffer out;
    header.encode(out);
    Encoder w(out);
    req.encode(w, version);
    std::optional<Reply> reply;
    broker_->on_frame(InboundFrame{1, sequence_++, std::make_shared<Bytes>(out.bytes()), "127.0.0.1:1"},
                      [&](Reply r) { reply = std::move(r); });
    Response response;
    EXPECT_TRUE(reply.has_value());
    if (!reply) return response;
    EXPECT_EQ(reply->kind, ReplyKind::kSend);
    ByteReader r(reply->payload.bytes());
    EXPECT_EQ(size_t(r.read_i32()), reply->payload.bytes().size() - 4);
    EXPECT_EQ(r.read_i32(), header.correlation_id);
    if (response_header_version(header.api_key, version) == 1) {
      EXPECT_EQ(r.read_uvarint(), 0u);
    }
    EXPECT_TRUE(response.decode(r, version));
    EXPECT_TRUE(r.ok() && r.at_end());
    return response;
  }

  CreateTopicsResponse create(const std::string& name, int32_t partitions, int16_t version = 7,
                              std::map<std::string, std::string> configs = {}, bool validate_only = false) {
    CreateTopicsRequest req;
    CreateTopicsRequest::CreatableTopic t;
    t.name = name;
    t.num_partitions = partitions;
    t.replication_factor = 1;
    for (const auto& [k, v] : configs) t.configs.push_back({k, v});
    req.topics.push_back(t);
    req.validate_only = validate_only;
    return call<CreateTopicsResponse>(req, version);
  }

  DescribeConfigsResponse::DescribeConfigsResult describe(int8_t type, const std::string& name, int16_t version,
                                                          std::optional<std::vector<std::string>> keys = std::nullopt,
                                                          bool synonyms = false, bool docs = false) {
    DescribeConfigsRequest req;
    req.resources.push_back({type, name, std::move(keys)});
    req.include_synonyms = synonyms;
    req.include_documentation = docs;
    auto resp = call<DescribeConfigsResponse>(req, version);
    EXPECT_EQ(resp.results.size(), 1u);
    return resp.results.empty() ? DescribeConfigsResponse::DescribeConfigsResult{} : resp.results[0];
  }

  const LogConfig& log_config(const std::string& topic, int32_t partition = 0) {
    Partition* p = broker_->replicas().get(TopicPartition{topic, PartitionId(partition)});
    EXPECT_NE(p, nullptr);
    return p->log().config();
  }

  // Every directory in the log dir whose name starts with `prefix`.
  std::vector<std::string> dirs_starting_with(const std::string& prefix) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_ / "logs")) {
      std::string name = e.path().filename().string();
      if (name.starts_with(prefix)) out.push_back(name);
    }
    return out;
  }

  fs::path dir_;
  std::optional<BrokerConfig> config_;
  std::unique_ptr<PosixRuntime> loop_;
  PosixFileSystem posix_;                               // under the broker's FaultyFileSystem
  std::unique_ptr<test::FaultyFileSystem> files_;
  std::unique_ptr<test::RuntimeWithFiles> runtime_;     // loop_ with files_ as its file system
  std::unique_ptr<Broker> broker_;
  int32_t correlation_id_ = 0;
  uint64_t sequence_ = 0;
};

const DescribeConfigsResponse::DescribeConfigsResourceResult* find_config(
    const DescribeConfigsResponse::DescribeConfigsResult& result, const std::string& name) {
  for (const auto& c : result.configs) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

TEST_F(AdminHandlersTest, CreateTopicsV7DescribesTheCreatedTopic) {
  start();
  auto resp = create("orders", 3, 7, {{"retention.ms", "1000"}});
  ASSERT_EQ(resp.topics.size(), 1u);
  const auto& t = resp.topics[0];
  EXPECT_EQ(t.error_code, 0);
  EXPECT_EQ(t.error_message, std::nullopt);
  EXPECT_EQ(t.num_partitions, 3);
  EXPECT_EQ(t.replication_factor, 1);
  const TopicState* topic = broker_->image().topic("orders");
  ASSERT_NE(topic, nullptr);
  EXPECT_EQ(t.topic_id.bytes, topic->id.bytes);
  ASSERT_TRUE(t.configs.has_value());
  bool saw_retention = false;
  for (const auto& c : *t.configs) {
    if (c.name == "retention.ms") {
      saw_retention = true;
      EXPECT_EQ(c.value, "1000");
      EXPECT_EQ(c.config_source, int8_t(ConfigSource::kDynamicTopic));
    }
    if (c.name == "segment.bytes") {
      EXPECT_EQ(c.config_source, int8_t(ConfigSource::kDefault));
    }
  }
  EXPECT_TRUE(saw_retention);
  EXPECT_EQ(log_config("orders", 2).retention_ms, 1000);
}

TEST_F(AdminHandlersTest, CreateTopicsErrorsAndValidateOnly) {
  start({{"num.partitions", "2"}});
  EXPECT_EQ(create("dry", 4, 7, {}, true).topics[0].error_code, 0);
  EXPECT_EQ(broker_->image().topic("dry"), nullptr);
  EXPECT_EQ(create("dry", 4, 7, {}, true).topics[0].num_partitions, 4);

  auto bad = create("bad", 1, 4, {{"retention.ms", "abc"}});
  EXPECT_EQ(bad.topics[0].error_code, int16_t(ErrorCode::kInvalidConfig));
  EXPECT_NE(bad.topics[0].error_message->find("retention.ms"), std::string::npos);
  EXPECT_EQ(create("bad", 1, 4, {{"no.such.key", "1"}}).topics[0].error_code, int16_t(ErrorCode::kInvalidConfig));
  EXPECT_EQ(create("bad", 0, 4).topics[0].error_code, int16_t(ErrorCode::kInvalidPartitions));
  EXPECT_EQ(broker_->image().topic("bad"), nullptr);

  EXPECT_EQ(create("dflt", -1, 4).topics[0].error_code, 0);
  EXPECT_EQ(broker_->image().topic("dflt")->partitions.size(), 2u);
  auto again = create("dflt", 1, 0);
  EXPECT_EQ(again.topics[0].error_code, int16_t(ErrorCode::kTopicAlreadyExists));

  CreateTopicsRequest dup;
  dup.topics.resize(3);
  dup.topics[0].name = dup.topics[1].name = "twice";
  dup.topics[2].name = "once";
  for (auto& t : dup.topics) t.num_partitions = 1, t.replication_factor = 1;
  auto resp = call<CreateTopicsResponse>(dup, 3);
  ASSERT_EQ(resp.topics.size(), 2u);
  EXPECT_EQ(resp.topics[0].name, "twice");
  EXPECT_EQ(resp.topics[0].error_code, int16_t(ErrorCode::kInvalidRequest));
  EXPECT_EQ(resp.topics[1].error_code, 0);
  EXPECT_EQ(broker_->image().topic("twice"), nullptr);
}

TEST_F(AdminHandlersTest, CreateTopicsManualAssignment) {
  start();
  CreateTopicsRequest req;
  CreateTopicsRequest::CreatableTopic t;
  t.name = "manual";
  t.num_partitions = -1;
  t.replication_factor = -1;
  t.assignments = {{1, {1}}, {0, {1}}};
  req.topics.push_back(t);
  EXPECT_EQ(call<CreateTopicsResponse>(req, 5).topics[0].error_code, 0);
  EXPECT_EQ(broker_->image().topic("manual")->partitions.size(), 2u);

  req.topics[0].name = "gap";
  req.topics[0].assignments = {{0, {1}}, {2, {1}}};
  EXPECT_EQ(call<CreateTopicsResponse>(req, 5).topics[0].error_code, int16_t(ErrorCode::kInvalidReplicaAssignment));
  req.topics[0].assignments = {{0, {7}}};
  EXPECT_EQ(call<CreateTopicsResponse>(req, 5).topics[0].error_code, int16_t(ErrorCode::kInvalidReplicaAssignment));
}

TEST_F(AdminHandlersTest, DeleteTopicsByNameAndIdRemovesTheLogs) {
  start();
  create("a", 2);
  create("b", 1);
  ASSERT_EQ(dirs_starting_with("a-").size(), 2u);
  samsa::Uuid b_id = broker_->image().topic("b")->id;

  DeleteTopicsRequest by_name;
  by_name.topic_names = {"a", "missing"};
  auto resp = call<DeleteTopicsResponse>(by_name, 1);
  ASSERT_EQ(resp.responses.size(), 2u);
  EXPECT_EQ(resp.responses[0].error_code, 0);
  EXPECT_EQ(resp.responses[1].error_code, int16_t(ErrorCode::kUnknownTopicOrPartition));
  EXPECT_EQ(broker_->image().topic("a"), nullptr);
  EXPECT_TRUE(dirs_starting_with("a-").empty());

  DeleteTopicsRequest by_id;
  by_id.topics.resize(2);
  by_id.topics[0].topic_id.bytes = b_id.bytes;
  by_id.topics[1].topic_id.bytes[0] = 42;  // unknown
  auto v6 = call<DeleteTopicsResponse>(by_id, 6);
  ASSERT_EQ(v6.responses.size(), 2u);
  EXPECT_EQ(v6.responses[0].error_code, 0);
  EXPECT_EQ(v6.responses[0].name, "b");
  EXPECT_EQ(v6.responses[1].error_code, int16_t(ErrorCode::kUnknownTopicId));
  EXPECT_EQ(v6.responses[1].name, std::nullopt);
  EXPECT_TRUE(dirs_starting_with("b-").empty());

  // Recreating under the same name gives a new, empty topic.
  EXPECT_EQ(create("a", 1).topics[0].error_code, 0);
  EXPECT_EQ(dirs_starting_with("a-").size(), 1u);
}

TEST_F(AdminHandlersTest, DeleteTopicsRejectsAmbiguousEntries) {
  start();
  create("x", 1);
  DeleteTopicsRequest req;
  req.topics.resize(4);
  req.topics[0].name = "x";
  req.topics[1].name = "x";
  req.topics[2].name = "y";
  req.topics[2].topic_id.bytes[3] = 1;
  // topics[3]: neither name nor id
  auto resp = call<DeleteTopicsResponse>(req, 6);
  ASSERT_EQ(resp.responses.size(), 3u);
  for (const auto& r : resp.responses) EXPECT_EQ(r.error_code, int16_t(ErrorCode::kInvalidRequest));
  EXPECT_NE(broker_->image().topic("x"), nullptr);
}

TEST_F(AdminHandlersTest, DeleteTopicsDisabled) {
  start({{"delete.topic.enable", "false"}});
  create("kept", 1);
  DeleteTopicsRequest req;
  req.topic_names = {"kept"};
  EXPECT_EQ(call<DeleteTopicsResponse>(req, 3).responses[0].error_code, int16_t(ErrorCode::kTopicDeletionDisabled));
  EXPECT_EQ(call<DeleteTopicsResponse>(req, 1).responses[0].error_code, int16_t(ErrorCode::kInvalidRequest));
  EXPECT_NE(broker_->image().topic("kept"), nullptr);
}

TEST_F(AdminHandlersTest, CreatePartitions) {
  start();
  create("grow", 1);
  CreatePartitionsRequest req;
  req.topics.push_back({"grow", 3, std::nullopt});
  req.validate_only = true;
  EXPECT_EQ(call<CreatePartitionsResponse>(req, 3).results[0].error_code, 0);
  EXPECT_EQ(broker_->image().topic("grow")->partitions.size(), 1u);
  req.validate_only = false;
  EXPECT_EQ(call<CreatePartitionsResponse>(req, 3).results[0].error_code, 0);
  EXPECT_EQ(broker_->image().topic("grow")->partitions.size(), 3u);
  EXPECT_NE(broker_->replicas().get(TopicPartition{"grow", PartitionId(2)}), nullptr);

  req.topics[0].count = 2;
  auto shrink = call<CreatePartitionsResponse>(req, 0);
  EXPECT_EQ(shrink.results[0].error_code, int16_t(ErrorCode::kInvalidPartitions));
  EXPECT_TRUE(shrink.results[0].error_message.has_value());

  req.topics[0].count = 4;
  req.topics[0].assignments.emplace();
  req.topics[0].assignments->push_back({{1}});
  EXPECT_EQ(call<CreatePartitionsResponse>(req, 1).results[0].error_code, 0);
  req.topics[0] = {"nope", 2, std::nullopt};
  EXPECT_EQ(call<CreatePartitionsResponse>(req, 1).results[0].error_code,
            int16_t(ErrorCode::kUnknownTopicOrPartition));
}

// Issue 10 item 1: a 2^31-1 partition count is refused before any record is
// planned, validate_only or not, and so is a request whose topics together
// ask for more than max.partitions.per.request.
TEST_F(AdminHandlersTest, PartitionCountsAreBounded) {
  start({{"max.partitions.per.request", "10"}});
  create("grow", 1);
  CreatePartitionsRequest req;
  req.topics.push_back({"grow", INT32_MAX, std::nullopt});
  for (bool validate_only : {true, false}) {
    req.validate_only = validate_only;
    auto resp = call<CreatePartitionsResponse>(req, 0);
    ASSERT_EQ(resp.results.size(), 1u);
    EXPECT_EQ(resp.results[0].error_code, int16_t(ErrorCode::kPolicyViolation));
    ASSERT_TRUE(resp.results[0].error_message.has_value());
    EXPECT_NE(resp.results[0].error_message->find("max.partitions.per.request"), std::string::npos);
  }
  EXPECT_EQ(broker_->image().topic("grow")->partitions.size(), 1u);

  auto huge = create("huge", INT32_MAX, 4, {}, true);
  ASSERT_EQ(huge.topics.size(), 1u);
  EXPECT_EQ(huge.topics[0].error_code, int16_t(ErrorCode::kPolicyViolation));

  CreateTopicsRequest two;
  for (const char* name : {"a", "b"}) {
    CreateTopicsRequest::CreatableTopic t;
    t.name = name;
    t.num_partitions = 6;
    t.replication_factor = 1;
    two.topics.push_back(t);
  }
  auto both = call<CreateTopicsResponse>(two, 4);
  ASSERT_EQ(both.topics.size(), 2u);
  for (const auto& t : both.topics) EXPECT_EQ(t.error_code, int16_t(ErrorCode::kPolicyViolation)) << t.name;
  EXPECT_EQ(broker_->image().topic("a"), nullptr);
  EXPECT_EQ(broker_->image().topic("b"), nullptr);
}

// Issue 10 item 10: a partition log that cannot be created (here: EMFILE
// injected) does not fail the metadata commit; the next metadata change
// (or the housekeeping tick) creates it.
TEST_F(AdminHandlersTest, LogCreationFailureDoesNotFailTheCommit) {
  start();
  files_->set_hook([](test::FileOp op, const fs::path& path) {
    return op == test::FileOp::kOpen && path.string().find("/burst-") != std::string::npos ? EMFILE : 0;
  });
  auto resp = create("burst", 3);
  files_->clear_hook();
  ASSERT_EQ(resp.topics.size(), 1u);
  EXPECT_EQ(resp.topics[0].error_code, 0);
  ASSERT_NE(broker_->image().topic("burst"), nullptr);
  EXPECT_EQ(broker_->replicas().unopened().size(), 3u);
  EXPECT_EQ(broker_->replicas().get(TopicPartition{"burst", PartitionId(0)}), nullptr);

  create("later", 1);
  EXPECT_TRUE(broker_->replicas().unopened().empty());
  for (int32_t p = 0; p < 3; ++p) EXPECT_NE(broker_->replicas().get(TopicPartition{"burst", PartitionId(p)}), nullptr);
}

TEST_F(AdminHandlersTest, DescribeTopicConfigsWithSynonymsTypesAndDocs) {
  start({{"log.retention.bytes", "5000"}});
  create("cfg", 1, 7, {{"cleanup.policy", "compact"}});
  auto result = describe(kTopicResource, "cfg", 4, std::nullopt, true, true);
  EXPECT_EQ(result.error_code, 0);
  EXPECT_EQ(result.error_message, std::nullopt);

  const auto* policy = find_config(result, "cleanup.policy");
  ASSERT_NE(policy, nullptr);
  EXPECT_EQ(policy->value, "compact");
  EXPECT_EQ(policy->config_source, int8_t(ConfigSource::kDynamicTopic));
  EXPECT_EQ(policy->config_type, 7);  // LIST
  EXPECT_FALSE(policy->read_only);
  ASSERT_EQ(policy->synonyms.size(), 2u);
  EXPECT_EQ(policy->synonyms[0].source, int8_t(ConfigSource::kDynamicTopic));
  EXPECT_EQ(policy->synonyms[1].name, "log.cleanup.policy");
  EXPECT_EQ(policy->synonyms[1].value, "delete");
  EXPECT_EQ(policy->synonyms[1].source, int8_t(ConfigSource::kDefault));
  ASSERT_TRUE(policy->documentation.has_value());
  EXPECT_FALSE(policy->documentation->empty());

  const auto* bytes = find_config(result, "retention.bytes");
  ASSERT_NE(bytes, nullptr);
  EXPECT_EQ(bytes->value, "5000");
  EXPECT_EQ(bytes->config_source, int8_t(ConfigSource::kStaticBroker));
  EXPECT_EQ(bytes->config_type, 5);  // LONG
  ASSERT_EQ(bytes->synonyms.size(), 2u);
  EXPECT_EQ(bytes->synonyms[0].name, "log.retention.bytes");
  EXPECT_EQ(bytes->synonyms[0].source, int8_t(ConfigSource::kStaticBroker));
  EXPECT_EQ(bytes->synonyms[1].value, "-1");

  // Filtered, without synonyms or docs; v0 reports is_default.
  auto v0 = describe(kTopicResource, "cfg", 0, std::vector<std::string>{"cleanup.policy", "segment.bytes", "nope"});
  ASSERT_EQ(v0.configs.size(), 2u);
  EXPECT_FALSE(find_config(v0, "cleanup.policy")->is_default);
  EXPECT_TRUE(find_config(v0, "segment.bytes")->is_default);
  auto v1 = describe(kTopicResource, "cfg", 1, std::vector<std::string>{"segment.bytes"});
  EXPECT_TRUE(v1.configs[0].synonyms.empty());
  EXPECT_EQ(v1.configs[0].config_source, int8_t(ConfigSource::kDefault));

  EXPECT_EQ(describe(kTopicResource, "missing", 2).error_code, int16_t(ErrorCode::kUnknownTopicOrPartition));
  EXPECT_EQ(describe(kTopicResource, "bad/name", 2).error_code, int16_t(ErrorCode::kInvalidTopicException));
  EXPECT_EQ(describe(8, "1", 2).error_code, int16_t(ErrorCode::kInvalidRequest));
}

TEST_F(AdminHandlersTest, DescribeBrokerConfigs) {
  start({{"num.partitions", "3"}});
  auto result = describe(kBrokerResource, "1", 4, std::nullopt, true, false);
  EXPECT_EQ(result.error_code, 0);
  const auto* partitions = find_config(result, "num.partitions");
  ASSERT_NE(partitions, nullptr);
  EXPECT_EQ(partitions->value, "3");
  EXPECT_TRUE(partitions->read_only);
  EXPECT_EQ(partitions->config_source, int8_t(ConfigSource::kStaticBroker));
  EXPECT_EQ(partitions->config_type, 3);  // INT
  ASSERT_EQ(partitions->synonyms.size(), 2u);
  EXPECT_EQ(partitions->synonyms[1].value, "1");
  EXPECT_EQ(partitions->documentation, std::nullopt);
  const auto* replication = find_config(result, "default.replication.factor");
  ASSERT_NE(replication, nullptr);
  EXPECT_EQ(replication->config_source, int8_t(ConfigSource::kDefault));

  EXPECT_TRUE(describe(kBrokerResource, "", 4).configs.empty());
  EXPECT_EQ(describe(kBrokerResource, "2", 4).error_code, int16_t(ErrorCode::kInvalidRequest));
  EXPECT_EQ(describe(kBrokerResource, "one", 4).error_code, int16_t(ErrorCode::kInvalidRequest));
}

TEST_F(AdminHandlersTest, AlterConfigsReplacesTheWholeOverrideSet) {
  start();
  create("alt", 1, 7, {{"retention.ms", "1000"}, {"segment.bytes", "100000"}});
  AlterConfigsRequest req;
  req.resources.push_back({kTopicResource, "alt", {{"retention.ms", "2000"}}});
  req.validate_only = true;
  EXPECT_EQ(call<AlterConfigsResponse>(req, 2).responses[0].error_code, 0);
  EXPECT_EQ(log_config("alt").retention_ms, 1000);

  req.validate_only = false;
  auto resp = call<AlterConfigsResponse>(req, 0);
  EXPECT_EQ(resp.responses[0].error_code, 0);
  EXPECT_EQ(resp.responses[0].error_message, std::nullopt);
  EXPECT_EQ(log_config("alt").retention_ms, 2000);
  EXPECT_EQ(log_config("alt").segment_bytes, 1073741824);  // override dropped
  EXPECT_EQ(broker_->image().topic("alt")->configs, (std::map<std::string, std::string>{{"retention.ms", "2000"}}));

  req.resources[0].configs = {{"retention.ms", "x"}};
  auto bad = call<AlterConfigsResponse>(req, 1);
  EXPECT_EQ(bad.responses[0].error_code, int16_t(ErrorCode::kInvalidConfig));
  EXPECT_EQ(log_config("alt").retention_ms, 2000);

  req.resources[0] = {kBrokerResource, "1", {{"num.partitions", "2"}}};
  auto broker = call<AlterConfigsResponse>(req, 1);
  EXPECT_EQ(broker.responses[0].error_code, int16_t(ErrorCode::kInvalidRequest));
  EXPECT_EQ(broker.responses[0].error_message, "Cannot update these configs dynamically: Set(num.partitions)");

  req.resources = {{kTopicResource, "missing", {}}};
  EXPECT_EQ(call<AlterConfigsResponse>(req, 1).responses[0].error_code,
            int16_t(ErrorCode::kUnknownTopicOrPartition));
}

TEST_F(AdminHandlersTest, IncrementalAlterConfigsChangesOnlyNamedKeys) {
  start();
  create("inc", 1, 7, {{"retention.ms", "1000"}, {"segment.bytes", "100000"}});
  using Op = IncrementalAlterConfigsRequest::AlterableConfig;
  auto alter = [&](std::vector<Op> ops, bool validate_only = false) {
    IncrementalAlterConfigsRequest req;
    req.resources.push_back({kTopicResource, "inc", std::move(ops)});
    req.validate_only = validate_only;
    return call<IncrementalAlterConfigsResponse>(req, 1).responses.at(0);
  };
  EXPECT_EQ(alter({{"retention.ms", 0, "3000"}}).error_code, 0);
  EXPECT_EQ(log_config("inc").retention_ms, 3000);
  EXPECT_EQ(log_config("inc").segment_bytes, 100000);

  EXPECT_EQ(alter({{"cleanup.policy", 2, "compact"}}).error_code, 0);  // APPEND to the default "delete"
  EXPECT_EQ(broker_->image().topic("inc")->configs.at("cleanup.policy"), "delete,compact");
  EXPECT_TRUE(log_config("inc").cleanup_policy.compact);
  EXPECT_EQ(alter({{"cleanup.policy", 3, "delete"}}).error_code, 0);  // SUBTRACT
  EXPECT_EQ(broker_->image().topic("inc")->configs.at("cleanup.policy"), "compact");
  EXPECT_FALSE(log_config("inc").cleanup_policy.delete_segments);

  EXPECT_EQ(alter({{"segment.bytes", 1, std::nullopt}}).error_code, 0);  // DELETE
  EXPECT_EQ(log_config("inc").segment_bytes, 1073741824);

  EXPECT_EQ(alter({{"retention.ms", 2, "5"}}).error_code, int16_t(ErrorCode::kInvalidConfig));
  EXPECT_EQ(alter({{"retention.ms", 0, "-7"}}).error_code, int16_t(ErrorCode::kInvalidConfig));
  EXPECT_EQ(alter({{"unknown.key", 0, "1"}}).error_code, int16_t(ErrorCode::kInvalidConfig));
  EXPECT_EQ(alter({{"retention.ms", 0, "1"}, {"retention.ms", 1, std::nullopt}}).error_code,
            int16_t(ErrorCode::kInvalidRequest));
  EXPECT_EQ(alter({{"retention.ms", 9, "1"}}).error_code, int16_t(ErrorCode::kInvalidRequest));
  EXPECT_EQ(alter({{"retention.ms", 0, "1"}}, true).error_code, 0);
  EXPECT_EQ(log_config("inc").retention_ms, 3000);

  IncrementalAlterConfigsRequest broker_req;
  broker_req.resources.push_back({kBrokerResource, "1", {{"num.partitions", 0, "2"}}});
  broker_req.resources.push_back({kTopicResource, "inc", {}});
  broker_req.resources.push_back({kTopicResource, "inc", {}});
  auto resp = call<IncrementalAlterConfigsResponse>(broker_req, 0);
  ASSERT_EQ(resp.responses.size(), 2u);
  EXPECT_EQ(resp.responses[0].error_code, int16_t(ErrorCode::kInvalidRequest));
  EXPECT_EQ(resp.responses[1].error_code, int16_t(ErrorCode::kInvalidRequest));
}

// Dynamic broker configs (Kafka 3.9's ConfigAdminManager and
// ConfigurationControlManager); the real-client tests are in
// tests/integration/test_dynamic_broker_configs.py.
TEST_F(AdminHandlersTest, DynamicBrokerConfigsApplyToTopicsAndSurviveARestart) {
  start({{"message.max.bytes", "5000"}});
  create("dyn", 1, 7, {});
  create("own", 1, 7, {{"max.message.bytes", "9000"}});
  EXPECT_EQ(log_config("dyn").max_message_bytes, 5000);
  using Op = IncrementalAlterConfigsRequest::AlterableConfig;
  auto alter = [&](const std::string& name, std::vector<Op> ops, bool validate_only = false) {
    IncrementalAlterConfigsRequest req;
    req.resources.push_back({kBrokerResource, name, std::move(ops)});
    req.validate_only = validate_only;
    return call<IncrementalAlterConfigsResponse>(req, 1).responses.at(0);
  };
  EXPECT_EQ(alter("", {{"message.max.bytes", 0, "3000"}}, true).error_code, 0);
  EXPECT_EQ(log_config("dyn").max_message_bytes, 5000);  // validate_only
  EXPECT_EQ(alter("", {{"message.max.bytes", 0, "3000"}}).error_code, 0);
  EXPECT_EQ(log_config("dyn").max_message_bytes, 3000);
  EXPECT_EQ(alter("1", {{"message.max.bytes", 0, "2000"}}).error_code, 0);
  EXPECT_EQ(log_config("dyn").max_message_bytes, 2000);  // per-broker beats the cluster default
  EXPECT_EQ(log_config("own").max_message_bytes, 9000);  // the topic's own override beats both
  EXPECT_EQ(alter("1", {{"log.cleanup.policy", 2, "compact"}}).error_code, 0);  // APPEND to Kafka's default
  EXPECT_EQ(broker_->image().broker_configs("1").at("log.cleanup.policy"), "delete,compact");

  // The cleaner's dynamic keys reach it at once, and after a restart (below).
  EXPECT_EQ(alter("1", {{"log.cleaner.backoff.ms", 0, "1234"}}).error_code, 0);
  EXPECT_EQ(broker_->replicas().logs().cleaner().config().backoff_ms, 1234);

  auto wrong = alter("2", {{"message.max.bytes", 0, "1"}});
  EXPECT_EQ(wrong.error_code, int16_t(ErrorCode::kInvalidRequest));
  EXPECT_EQ(wrong.error_message, "Unexpected broker id, expected 1, but received 2");
  EXPECT_EQ(alter("x", {{"message.max.bytes", 0, "1"}}).error_message, "Node id must be an integer, but it is: x");
  auto bad = alter("", {{"message.max.bytes", 0, "big"}});
  EXPECT_EQ(bad.error_code, int16_t(ErrorCode::kInvalidRequest));
  EXPECT_EQ(bad.error_message, "Invalid value big for configuration message.max.bytes: Not a number of type INT");
  EXPECT_EQ(alter("", {{"message.max.bytes", 3, "1"}}).error_code, int16_t(ErrorCode::kInvalidConfig));
  EXPECT_EQ(alter("", {{"message.max.bytes", 0, std::nullopt}}).error_message,
            "Null value not supported for : message.max.bytes");

  auto described = describe(kBrokerResource, "1", 4, std::vector<std::string>{"message.max.bytes"}, true, false);
  ASSERT_EQ(described.configs.size(), 1u);
  EXPECT_EQ(described.configs[0].value, "2000");
  EXPECT_FALSE(described.configs[0].read_only);
  EXPECT_EQ(described.configs[0].config_source, int8_t(ConfigSource::kDynamicBroker));
  ASSERT_EQ(described.configs[0].synonyms.size(), 4u);  // per-broker, default, static, Kafka's default
  EXPECT_EQ(described.configs[0].synonyms[3].value, "1048588");
  auto cluster = describe(kBrokerResource, "", 4, std::nullopt, true, false);
  ASSERT_EQ(cluster.configs.size(), 1u);
  EXPECT_EQ(cluster.configs[0].value, "3000");
  EXPECT_EQ(cluster.configs[0].synonyms.size(), 1u);  // only the cluster-default layer
  auto topic = describe(kTopicResource, "dyn", 4, std::vector<std::string>{"max.message.bytes"}, true, false);
  EXPECT_EQ(topic.configs[0].config_source, int8_t(ConfigSource::kDynamicBroker));
  EXPECT_EQ(topic.configs[0].synonyms[0].name, "message.max.bytes");

  stop();
  start({{"message.max.bytes", "5000"}});
  EXPECT_EQ(log_config("dyn").max_message_bytes, 2000);
  EXPECT_EQ(broker_->replicas().logs().cleaner().config().backoff_ms, 1234);
  AlterConfigsRequest legacy;  // replaces the per-broker set: message.max.bytes goes back to the default's
  legacy.resources.push_back({kBrokerResource, "1", {{"log.retention.bytes", "777"}}});
  EXPECT_EQ(call<AlterConfigsResponse>(legacy, 1).responses[0].error_code, 0);
  EXPECT_EQ(broker_->image().broker_configs("1"), (std::map<std::string, std::string>{{"log.retention.bytes", "777"}}));
  EXPECT_EQ(log_config("dyn").max_message_bytes, 3000);
  EXPECT_EQ(log_config("dyn").retention_bytes, 777);
  EXPECT_EQ(broker_->replicas().logs().cleaner().config().backoff_ms, 15000);  // replaced set: the default again
}

TEST_F(AdminHandlersTest, TopicConfigChangesSurviveARestart) {
  start();
  create("durable", 1);
  IncrementalAlterConfigsRequest req;
  req.resources.push_back({kTopicResource, "durable", {{"retention.ms", 0, "4242"}}});
  EXPECT_EQ(call<IncrementalAlterConfigsResponse>(req, 1).responses[0].error_code, 0);
  stop();
  start();
  EXPECT_EQ(log_config("durable").retention_ms, 4242);
  auto result = describe(kTopicResource, "durable", 2, std::vector<std::string>{"retention.ms"});
  EXPECT_EQ(result.configs.at(0).value, "4242");
}

TEST_F(AdminHandlersTest, DescribeCluster) {
  start();
  DescribeClusterRequest req;
  req.include_cluster_authorized_operations = true;
  auto resp = call<DescribeClusterResponse>(req, 1);
  EXPECT_EQ(resp.error_code, 0);
  EXPECT_EQ(resp.cluster_id, broker_->cluster_id());
  EXPECT_EQ(resp.controller_id, 1);
  ASSERT_EQ(resp.brokers.size(), 1u);
  EXPECT_EQ(resp.brokers[0].broker_id, 1);
  EXPECT_EQ(resp.brokers[0].port, 9092);
  EXPECT_NE(resp.cluster_authorized_operations, std::numeric_limits<int32_t>::min());
  req.endpoint_type = 2;
  EXPECT_EQ(call<DescribeClusterResponse>(req, 1).error_code, int16_t(ErrorCode::kUnsupportedEndpointType));
  req.include_cluster_authorized_operations = false;
  EXPECT_EQ(call<DescribeClusterResponse>(req, 0).cluster_authorized_operations, std::numeric_limits<int32_t>::min());
}

// A fenced broker is not alive: Metadata and DescribeCluster leave it out
// and Metadata lists its replicas as offline (Kafka's KRaftMetadataCache).
TEST_F(AdminHandlersTest, FencedBrokersAreNotListedAndTheirReplicasAreOffline) {
  start();
  Uuid topic;
  topic.bytes[0] = 42;
  RegisterBrokerRecord second;
  second.broker_id = NodeId(2);
  second.broker_epoch = BrokerEpoch(7);
  second.endpoints = {{"PLAINTEXT", "127.0.0.1", 9093, 0}};
  second.fenced = false;
  ASSERT_FALSE(test::commit_now(*broker_, {second, TopicRecord{"spread", topic},
                      PartitionRecord{topic, PartitionId(0), {NodeId(1), NodeId(2)}, {NodeId(1), NodeId(2)},
                                      NodeId(1), LeaderEpoch(0), 0}}).has_value());
  EXPECT_EQ(call<DescribeClusterResponse>(DescribeClusterRequest{}, 1).brokers.size(), 2u);
  ASSERT_FALSE(test::commit_now(*broker_, {BrokerRegistrationChangeRecord{
                                            NodeId(2), BrokerEpoch(7), BrokerRegistrationChangeRecord::Fencing::kFence}})
                   .has_value());
  auto cluster = call<DescribeClusterResponse>(DescribeClusterRequest{}, 1);
  ASSERT_EQ(cluster.brokers.size(), 1u);
  EXPECT_EQ(cluster.brokers[0].broker_id, 1);

  MetadataRequest req;
  req.topics = std::vector<MetadataRequest::MetadataRequestTopic>{};
  req.topics->emplace_back();
  req.topics->back().name = "spread";
  auto metadata = call<MetadataResponse>(req, 9);
  ASSERT_EQ(metadata.brokers.size(), 1u);
  EXPECT_EQ(metadata.brokers[0].node_id, 1);
  ASSERT_EQ(metadata.topics.size(), 1u);
  ASSERT_EQ(metadata.topics[0].partitions.size(), 1u);
  EXPECT_EQ(metadata.topics[0].partitions[0].offline_replicas, std::vector<int32_t>{2});
  EXPECT_EQ(metadata.topics[0].partitions[0].replica_nodes, (std::vector<int32_t>{1, 2}));
}

TEST_F(AdminHandlersTest, DeleteRecordsAdvancesTheLowWatermark) {
  start();
  create("rec", 1);
  Partition* p = broker_->replicas().get(TopicPartition{"rec", PartitionId(0)});
  ASSERT_NE(p, nullptr);
  std::vector<std::string_view> values = {"a", "b", "c", "d", "e"};
  auto batch = build_simple_batch(values, 1000);
  ASSERT_TRUE(batch.ok());
  ASSERT_TRUE(p->append_as_leader(batch->data(), batch->size()).ok());
  ASSERT_EQ(p->high_watermark(), Offset(5));

  auto call_delete = [&](int64_t offset, int16_t version = 2) {
    DeleteRecordsRequest req;
    req.topics.push_back({"rec", {{0, offset}, {7, 0}}});
    auto resp = call<DeleteRecordsResponse>(req, version);
    EXPECT_EQ(resp.topics.at(0).partitions.at(1).error_code, int16_t(ErrorCode::kUnknownTopicOrPartition));
    return resp.topics.at(0).partitions.at(0);
  };
  auto r = call_delete(3);
  EXPECT_EQ(r.error_code, 0);
  EXPECT_EQ(r.low_watermark, 3);
  EXPECT_EQ(p->log().log_start_offset(), Offset(3));
  EXPECT_EQ(call_delete(1, 0).low_watermark, 3);  // never moves back
  EXPECT_EQ(call_delete(6).error_code, int16_t(ErrorCode::kOffsetOutOfRange));
  r = call_delete(-1, 1);
  EXPECT_EQ(r.error_code, 0);
  EXPECT_EQ(r.low_watermark, 5);
}

TEST_F(AdminHandlersTest, InternalAndCompactedTopicsAreProtected) {
  start();
  // The group coordinator creates __consumer_offsets on first use, as Kafka.
  EXPECT_EQ(broker_->groups().check_coordinator("some-group"), ErrorCode::kNone);
  ASSERT_NE(broker_->image().topic("__consumer_offsets"), nullptr);
  size_t partitions = broker_->image().topic("__consumer_offsets")->partitions.size();
  DeleteTopicsRequest del;
  del.topic_names = {"__consumer_offsets"};
  EXPECT_EQ(call<DeleteTopicsResponse>(del, 4).responses[0].error_code, int16_t(ErrorCode::kInvalidRequest));
  CreatePartitionsRequest grow;
  grow.topics.push_back({"__consumer_offsets", int32_t(partitions + 1), std::nullopt});
  EXPECT_EQ(call<CreatePartitionsResponse>(grow, 2).results[0].error_code, int16_t(ErrorCode::kInvalidRequest));
  EXPECT_EQ(broker_->image().topic("__consumer_offsets")->partitions.size(), partitions);

  DeleteRecordsRequest trim;
  trim.topics.push_back({"__consumer_offsets", {{0, 0}}});
  EXPECT_EQ(call<DeleteRecordsResponse>(trim, 2).topics[0].partitions[0].error_code,
            int16_t(ErrorCode::kInvalidTopicException));
  create("compacted", 1, 7, {{"cleanup.policy", "compact"}});
  trim.topics[0].name = "compacted";
  EXPECT_EQ(call<DeleteRecordsResponse>(trim, 2).topics[0].partitions[0].error_code,
            int16_t(ErrorCode::kPolicyViolation));
}

}  // namespace
}  // namespace samsa
