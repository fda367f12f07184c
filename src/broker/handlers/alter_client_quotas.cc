// AlterClientQuotas (v0-1): sets or removes quota keys of client quota
// entities (user, client-id, user + client-id, ip; a null name is the
// type's default entity), validated as Kafka's ClientQuotaControlManager
// does, and stored in the metadata log as ClientQuotaRecords (all the
// request's valid entities in one commit, as Kafka's atomic result). With
// validate_only nothing is committed. Quotas are stored and described, not
// enforced yet (docs/compatibility.md).
#include <arpa/inet.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <set>

#include "base/log.h"
#include "broker/async_response.h"
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/request.h"
#include "protocol/error_code.h"
#include "protocol/generated/alter_client_quotas.h"

namespace samsa {
namespace {

using protocol::AlterClientQuotasRequest;
using protocol::AlterClientQuotasResponse;
using protocol::ErrorCode;
using EntryData = AlterClientQuotasRequest::EntryData;

// The value types of Kafka's QuotaConfigs keys; they decide which values
// are valid (integral ones must be whole and in range).
enum class QuotaValueType { kLong, kInt, kDouble };
using QuotaKeys = std::map<std::string, QuotaValueType>;

const QuotaKeys& user_and_client_keys() {
  static const QuotaKeys kKeys{{"producer_byte_rate", QuotaValueType::kLong},
                               {"consumer_byte_rate", QuotaValueType::kLong},
                               {"request_percentage", QuotaValueType::kDouble},
                               {"controller_mutation_rate", QuotaValueType::kDouble}};
  return kKeys;
}
const QuotaKeys& ip_keys() {
  static const QuotaKeys kKeys{{"connection_creation_rate", QuotaValueType::kInt}};
  return kKeys;
}

ControllerError invalid(std::string message) { return ControllerError{ErrorCode::kInvalidRequest, std::move(message)}; }

// Kafka accepts an IP entity that InetAddress resolves; Samsa accepts the
// default (null) and numeric IPv4/IPv6 addresses, resolving no host names.
bool valid_ip_entity(const std::optional<std::string>& name) {
  if (!name) return true;
  unsigned char buf[16];
  return inet_pton(AF_INET, name->c_str(), buf) == 1 || inet_pton(AF_INET6, name->c_str(), buf) == 1;
}

struct ValidEntity {
  ClientQuotaEntity entity;
  const QuotaKeys* keys = nullptr;  // what its combination of types allows
};

// validateEntity + configKeysForEntityType.
std::variant<ValidEntity, ControllerError> validate_entity(const EntryData& entry) {
  if (entry.entity.empty()) return invalid("Invalid empty client quota entity");
  ClientQuotaEntity entity;
  for (const auto& e : entry.entity) {
    if (entity.contains(e.entity_type)) {
      return invalid("Invalid empty client quota entity, duplicate entity entry " + e.entity_type);
    }
    if (e.entity_type != "user" && e.entity_type != "client-id" && e.entity_type != "ip") {
      return invalid("Unhandled client quota entity type: " + e.entity_type);
    }
    if (e.entity_name && e.entity_name->empty()) return invalid("Empty " + e.entity_type + " not supported");
    entity.emplace(e.entity_type, e.entity_name);
  }
  if (entity.contains("ip")) {
    if (entity.size() > 1) {
      return invalid("Invalid quota entity combination, IP entity should not be combined with User or ClientId");
    }
    if (!valid_ip_entity(entity.at("ip"))) return invalid(*entity.at("ip") + " is not a valid IP or resolvable host.");
    return ValidEntity{std::move(entity), &ip_keys()};
  }
  return ValidEntity{std::move(entity), &user_and_client_keys()};
}

// validateQuotaKeyValue.
std::optional<ControllerError> validate_value(const QuotaKeys& keys, const std::string& key, double value) {
  auto it = keys.find(key);
  if (it == keys.end()) return invalid("Invalid configuration key " + key);
  if (value <= 0.0) return invalid("Quota " + key + " must be greater than 0");
  switch (it->second) {
    case QuotaValueType::kDouble:
      return std::nullopt;
    case QuotaValueType::kInt:
      if (value > double(std::numeric_limits<int32_t>::max())) {
        return invalid("Proposed value for " + key + " is too large for an INT.");
      }
      break;
    case QuotaValueType::kLong:
      if (value > double(std::numeric_limits<int64_t>::max())) {
        return invalid("Proposed value for " + key + " is too large for a LONG.");
      }
      break;
  }
  if (std::abs(std::fmod(value, 1.0)) > 1e-6) return invalid(key + " cannot be a fractional value.");
  return std::nullopt;
}

// One entry's records (only changes: an unchanged value or the removal of
// an absent key writes nothing), or why the entry is refused.
Plan plan_entry(const MetadataImage& image, const EntryData& entry) {
  auto validated = validate_entity(entry);
  if (auto* e = std::get_if<ControllerError>(&validated)) return *e;
  const auto& [entity, keys] = std::get<ValidEntity>(validated);
  std::set<std::string> seen;
  for (const auto& op : entry.ops) {
    if (!seen.insert(op.key).second) {
      return invalid("Duplicate quota key " + op.key + " not updating quota for this entity");
    }
  }
  static const std::map<std::string, double> kNone;
  auto current_it = image.client_quotas().find(entity);
  const auto& current = current_it == image.client_quotas().end() ? kNone : current_it->second;
  std::vector<MetadataRecord> records;
  for (const auto& op : entry.ops) {
    auto now = current.find(op.key);
    if (op.remove) {
      if (now != current.end()) records.push_back(ClientQuotaRecord{entity, op.key, 0, true});
      continue;
    }
    if (auto e = validate_value(*keys, op.key, op.value)) return *e;
    if (now == current.end() || now->second != op.value) {
      records.push_back(ClientQuotaRecord{entity, op.key, op.value, false});
    }
  }
  return records;
}

AlterClientQuotasResponse::EntryResultData answer(const EntryData& entry, const std::optional<ControllerError>& error) {
  AlterClientQuotasResponse::EntryResultData out;
  for (const auto& e : entry.entity) {
    AlterClientQuotasResponse::EntityResultData d;
    d.entity_type = e.entity_type;
    d.entity_name = e.entity_name;
    out.entity.push_back(std::move(d));
  }
  out.error_code = int16_t(error ? error->code : ErrorCode::kNone);
  out.error_message = error ? std::optional(error->message) : std::nullopt;
  return out;
}

ClientQuotaEntity entity_key(const EntryData& entry) {
  ClientQuotaEntity key;
  for (const auto& e : entry.entity) key.emplace(e.entity_type, e.entity_name);
  return key;
}

}  // namespace

void handle_alter_client_quotas(Broker& broker, Request& request) {
  AlterClientQuotasRequest body;
  if (!request.decode(body)) return;

  // An entity named by two entries is answered once, refused, and neither
  // entry is applied (Kafka answers it "Ignoring duplicate entity" too).
  std::map<ClientQuotaEntity, int> occurrences;
  for (const auto& entry : body.entries) ++occurrences[entity_key(entry)];

  std::vector<MetadataRecord> records;
  std::vector<std::pair<const EntryData*, std::optional<ControllerError>>> outcomes;
  std::set<ClientQuotaEntity> answered;
  for (const auto& entry : body.entries) {
    ClientQuotaEntity key = entity_key(entry);
    if (!answered.insert(key).second) continue;
    if (occurrences[key] > 1) {
      outcomes.emplace_back(&entry, invalid("Ignoring duplicate entity"));
      continue;
    }
    Plan planned = plan_entry(broker.controller().view(), entry);
    if (auto* e = std::get_if<ControllerError>(&planned)) {
      outcomes.emplace_back(&entry, *e);
      continue;
    }
    for (auto& r : std::get<std::vector<MetadataRecord>>(planned)) records.push_back(std::move(r));
    outcomes.emplace_back(&entry, std::nullopt);
  }

  auto reply = AsyncResponse<AlterClientQuotasResponse>::start(request);
  std::vector<size_t> accepted;  // entries whose fate is the commit's
  for (const auto& [entry, error] : outcomes) {
    if (!error) accepted.push_back(reply->response().entries.size());
    reply->response().entries.push_back(answer(*entry, error));
  }
  if (!body.validate_only && !records.empty()) {
    reply->add_part();
    size_t entities = outcomes.size();
    broker.submit_change(
        "a client quota change", [records](const MetadataImage&) { return Plan(records); }, 0,
        [reply, accepted, entities](std::optional<ControllerError> failed) {
          if (!failed) LOG_INFO("controller", "altered client quotas of {} entit(ies)", entities);
          for (size_t i : accepted) {
            auto& out = reply->response().entries[i];
            out.error_code = int16_t(failed ? failed->code : ErrorCode::kNone);
            out.error_message = failed ? std::optional(failed->message) : std::nullopt;
          }
          reply->finish();
        });
  }
  reply->finish();
}

}  // namespace samsa
