#include "broker/forwarded_answer.h"

#include <algorithm>

#include "protocol/generated/apis.h"
#include "protocol/error_code.h"
#include "protocol/generated/allocate_producer_ids.h"
#include "protocol/generated/alter_client_quotas.h"
#include "protocol/generated/alter_configs.h"
#include "protocol/generated/create_partitions.h"
#include "protocol/generated/delete_topics.h"
#include "protocol/generated/elect_leaders.h"
#include "protocol/generated/incremental_alter_configs.h"
#include "protocol/generated/unregister_broker.h"

namespace samsa {
namespace {

constexpr int16_t kNotController = int16_t(protocol::ErrorCode::kNotController);

template <typename Response>
bool decodes(Response& response, int16_t version, ByteView body) {
  ByteReader reader(body);
  return response.decode(reader, version);
}

// Any element of `items` whose error_code is NOT_CONTROLLER.
template <typename Items>
bool any_not_controller(const Items& items) {
  return std::any_of(items.begin(), items.end(), [](const auto& i) { return i.error_code == kNotController; });
}

template <typename Response>
bool top_level_not_controller(int16_t version, ByteView body) {
  Response r;
  return decodes(r, version, body) && r.error_code == kNotController;
}

bool elect_leaders_not_controller(int16_t version, ByteView body) {
  protocol::ElectLeadersResponse r;
  if (!decodes(r, version, body)) return false;
  if (r.error_code == kNotController) return true;
  return std::any_of(r.replica_election_results.begin(), r.replica_election_results.end(),
                     [](const auto& topic) { return any_not_controller(topic.partition_result); });
}

}  // namespace

bool forwarded_answer_says_not_controller(int16_t api_key, int16_t api_version, ByteView body) {
  using protocol::ApiKey;
  switch (ApiKey(api_key)) {
    case ApiKey::kDeleteTopics: {
      protocol::DeleteTopicsResponse r;
      return decodes(r, api_version, body) && any_not_controller(r.responses);
    }
    case ApiKey::kCreatePartitions: {
      protocol::CreatePartitionsResponse r;
      return decodes(r, api_version, body) && any_not_controller(r.results);
    }
    case ApiKey::kAlterConfigs: {
      protocol::AlterConfigsResponse r;
      return decodes(r, api_version, body) && any_not_controller(r.responses);
    }
    case ApiKey::kIncrementalAlterConfigs: {
      protocol::IncrementalAlterConfigsResponse r;
      return decodes(r, api_version, body) && any_not_controller(r.responses);
    }
    case ApiKey::kAlterClientQuotas: {
      protocol::AlterClientQuotasResponse r;
      return decodes(r, api_version, body) && any_not_controller(r.entries);
    }
    case ApiKey::kElectLeaders:
      return elect_leaders_not_controller(api_version, body);
    case ApiKey::kUnregisterBroker:
      return top_level_not_controller<protocol::UnregisterBrokerResponse>(api_version, body);
    case ApiKey::kAllocateProducerIds:
      return top_level_not_controller<protocol::AllocateProducerIdsResponse>(api_version, body);
    default:
      return false;
  }
}

}  // namespace samsa
