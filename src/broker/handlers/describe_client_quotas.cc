// DescribeClientQuotas (v0-1): the stored client quotas (AlterClientQuotas)
// of the entities that match the filter, as Kafka's ClientQuotasImage.describe:
// each component names an entity type and matches it exactly (0, a name),
// as the default entity (1, null) or any entity of that type (2, including
// the default); strict also excludes entities with types the filter does
// not name. A bad filter is answered with the top-level error and null
// entries. No quotas configured: an empty result, error 0.
#include <set>

#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/request.h"
#include "protocol/error_code.h"
#include "protocol/generated/describe_client_quotas.h"

namespace samsa {
namespace {

using protocol::DescribeClientQuotasRequest;
using protocol::DescribeClientQuotasResponse;
using protocol::ErrorCode;

enum class MatchType : int8_t { kExact = 0, kDefault = 1, kSpecified = 2 };

struct Filter {
  ClientQuotaEntity exact;    // type -> name (nullopt: the default entity)
  std::set<std::string> any;  // types that must be present, any name
  bool strict = false;
};

ControllerError error(ErrorCode code, std::string message) { return ControllerError{code, std::move(message)}; }

std::variant<Filter, ControllerError> parse_filter(const DescribeClientQuotasRequest& body) {
  Filter filter;
  filter.strict = body.strict;
  for (const auto& c : body.components) {
    if (c.entity_type.empty()) return error(ErrorCode::kInvalidRequest, "Invalid empty entity type.");
    if (filter.exact.contains(c.entity_type) || filter.any.contains(c.entity_type)) {
      return error(ErrorCode::kInvalidRequest,
                   "Entity type " + c.entity_type + " cannot appear more than once in the filter.");
    }
    if (c.entity_type != "ip" && c.entity_type != "user" && c.entity_type != "client-id") {
      return error(ErrorCode::kUnsupportedVersion, "Unsupported entity type " + c.entity_type);
    }
    switch (MatchType(c.match_type)) {
      case MatchType::kExact:
        if (!c.match) {
          return error(ErrorCode::kInvalidRequest, "Request specified MATCH_TYPE_EXACT, but set match string to null.");
        }
        filter.exact.emplace(c.entity_type, c.match);
        break;
      case MatchType::kDefault:
        if (c.match) {
          return error(ErrorCode::kInvalidRequest,
                       "Request specified MATCH_TYPE_DEFAULT, but also specified a match string.");
        }
        filter.exact.emplace(c.entity_type, std::nullopt);
        break;
      case MatchType::kSpecified:
        if (c.match) {
          return error(ErrorCode::kInvalidRequest,
                       "Request specified MATCH_TYPE_SPECIFIED, but also specified a match string.");
        }
        filter.any.insert(c.entity_type);
        break;
      default:
        return error(ErrorCode::kUnsupportedVersion, "Unknown match type " + std::to_string(c.match_type));
    }
  }
  auto names = [&](const char* type) { return filter.exact.contains(type) || filter.any.contains(type); };
  if (names("ip") && (names("user") || names("client-id"))) {
    return error(ErrorCode::kInvalidRequest,
                 "Invalid entity filter component combination. IP filter component should not be used with "
                 "user or clientId filter component.");
  }
  return filter;
}

bool matches(const ClientQuotaEntity& entity, const Filter& filter) {
  if (filter.strict && entity.size() != filter.exact.size() + filter.any.size()) return false;
  for (const auto& [type, name] : filter.exact) {
    auto it = entity.find(type);
    if (it == entity.end() || it->second != name) return false;
  }
  for (const auto& type : filter.any) {
    if (!entity.contains(type)) return false;
  }
  return true;
}

DescribeClientQuotasResponse::EntryData describe(const ClientQuotaEntity& entity,
                                                 const std::map<std::string, double>& values) {
  DescribeClientQuotasResponse::EntryData out;
  for (const auto& [type, name] : entity) {
    DescribeClientQuotasResponse::EntityData e;
    e.entity_type = type;
    e.entity_name = name;
    out.entity.push_back(std::move(e));
  }
  for (const auto& [key, value] : values) {
    DescribeClientQuotasResponse::ValueData v;
    v.key = key;
    v.value = value;
    out.values.push_back(std::move(v));
  }
  return out;
}

}  // namespace

void handle_describe_client_quotas(Broker& broker, Request& request) {
  DescribeClientQuotasRequest body;
  if (!request.decode(body)) return;

  DescribeClientQuotasResponse response;
  auto filter = parse_filter(body);
  if (auto* e = std::get_if<ControllerError>(&filter)) {
    response.error_code = int16_t(e->code);
    response.error_message = e->message;
    response.entries = std::nullopt;
    request.respond(response);
    return;
  }
  response.entries.emplace();
  for (const auto& [entity, values] : broker.image().client_quotas()) {
    if (matches(entity, std::get<Filter>(filter))) response.entries->push_back(describe(entity, values));
  }
  request.respond(response);
}

}  // namespace samsa
