#include "broker/producer_ids.h"

#include <memory>

#include "base/log.h"
#include "broker/broker.h"
#include "broker/cluster_membership.h"
#include "protocol/codec.h"

namespace samsa {

using protocol::ErrorCode;

void ProducerIds::next(Done done) {
  if (next_ < end_) return done(ErrorCode::kNone, ProducerId(next_++));
  waiting_.push_back(std::move(done));
  request_block();
}

void ProducerIds::request_block() {
  if (requesting_) return;
  requesting_ = true;
  protocol::AllocateProducerIdsRequest request;
  request.broker_id = broker_.node_id().value();
  auto answer = [this](const protocol::AllocateProducerIdsResponse& response) { on_block(response); };
  if (!broker_.in_cluster() || broker_.controller().active()) {
    return allocate_producer_ids_on_controller(broker_, request, answer);
  }
  OutBuffer body;
  protocol::Encoder w(body);
  request.encode(w, 0);
  broker_.forward_to_active_controller(
      int16_t(protocol::ApiKey::kAllocateProducerIds), 0, body.bytes(), [answer](Result<Bytes> bytes) {
        protocol::AllocateProducerIdsResponse response;
        response.error_code = int16_t(ErrorCode::kNotController);
        if (bytes.ok()) {
          ByteReader r(*bytes);
          protocol::AllocateProducerIdsResponse decoded;
          if (decoded.decode(r, 0) && r.ok()) response = decoded;
        }
        answer(response);
      });
}

void ProducerIds::on_block(const protocol::AllocateProducerIdsResponse& response) {
  requesting_ = false;
  std::deque<Done> waiting = std::move(waiting_);
  waiting_.clear();
  if (response.error_code != 0 || response.producer_id_len <= 0 || response.producer_id_start < 0) {
    LOG_WARN("producer", "no producer id block from the controller (error {})", response.error_code);
    for (Done& done : waiting) done(ErrorCode::kCoordinatorLoadInProgress, ProducerId(-1));
    return;
  }
  next_ = response.producer_id_start;
  end_ = response.producer_id_start + response.producer_id_len;
  LOG_INFO("producer", "producer id block [{}, {}) from the controller", next_, end_);
  while (!waiting.empty()) {
    Done done = std::move(waiting.front());
    waiting.pop_front();
    next(std::move(done));
  }
}

void allocate_producer_ids_on_controller(Broker& broker, const protocol::AllocateProducerIdsRequest& request,
                                         std::function<void(protocol::AllocateProducerIdsResponse)> done) {
  protocol::AllocateProducerIdsResponse response;
  if (!broker.controller().active()) {
    response.error_code = int16_t(ErrorCode::kNotController);
    return done(response);
  }
  auto start = std::make_shared<int64_t>(-1);
  NodeId id(request.broker_id);
  BrokerEpoch epoch(request.broker_epoch);
  auto plan = [start, id, epoch](const MetadataImage& view) -> Plan {
    *start = view.next_producer_id().value();
    ProducerIdsRecord record{id, epoch, ProducerId(*start + ProducerIds::kBlockSize)};
    return std::vector<MetadataRecord>{record};
  };
  broker.submit_change("producer ids for broker " + std::to_string(id.value()), plan, 0,
                       [start, done = std::move(done)](std::optional<ControllerError> failed) {
                         protocol::AllocateProducerIdsResponse answer;
                         if (failed) {
                           answer.error_code = int16_t(failed->code);
                           return done(answer);
                         }
                         answer.producer_id_start = *start;
                         answer.producer_id_len = ProducerIds::kBlockSize;
                         done(answer);
                       });
}

}  // namespace samsa
