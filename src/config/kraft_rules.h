#pragma once
// Kafka's cross-key rules for KRaft roles, listeners and the controller
// quorum (KafkaConfig.validateValues, Kafka 4.x), with Kafka's messages.
// Internal to config/: BrokerConfig::from_properties calls it once the
// listeners and quorum keys are parsed.

#include <map>
#include <string>

#include "base/config_def.h"
#include "base/result.h"
#include "config/broker_config.h"

namespace samsa {

// `protocols`: listener.security.protocol.map, names upper-cased.
Status validate_kraft_roles(const BrokerConfig& c, const ConfigValues& v,
                            const std::map<std::string, std::string>& protocols);

}  // namespace samsa
