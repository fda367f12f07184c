#pragma once
// The simulation's clients use the product's Kafka client (io/kafka_client.h)
// under their old name.
#include "io/kafka_client.h"

namespace samsa::sim {
using KafkaWireClient = samsa::KafkaClient;
}  // namespace samsa::sim
