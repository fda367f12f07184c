// The broker-lifecycle metadata records: their encoding (round trips, the
// legacy RegisterBrokerRecord v0, malformed input) and what the image does
// with them.

#include <gtest/gtest.h>

#include "base/byte_writer.h"
#include "controller/metadata_codec.h"
#include "controller/metadata_image.h"
#include "protocol/codec.h"
#include "protocol/generated/register_broker_record.h"

namespace samsa {
namespace {

using Fencing = BrokerRegistrationChangeRecord::Fencing;

Uuid uuid_of(uint8_t n) {
  Uuid id;
  id.bytes[0] = n;
  id.bytes[15] = n;
  return id;
}

RegisterBrokerRecord registration(int id, int64_t epoch, bool fenced = true) {
  return RegisterBrokerRecord{NodeId(id),
                              BrokerEpoch(epoch),
                              uuid_of(uint8_t(id)),
                              {{"PLAINTEXT", "10.0.0." + std::to_string(id), 9092, 0}, {"SSL", "h", 9093, 1}},
                              std::string("rack-") + std::to_string(id),
                              fenced,
                              false};
}

template <typename T>
T round_trip(const T& record) {
  Bytes bytes = encode_metadata_record(MetadataRecord(record));
  auto decoded = decode_metadata_record(bytes);
  EXPECT_TRUE(decoded.ok()) << decoded.error().to_string();
  const T* typed = std::get_if<T>(&*decoded);
  EXPECT_NE(typed, nullptr);
  return typed ? *typed : T{};
}

TEST(BrokerRecords, RegisterBrokerRoundTrips) {
  RegisterBrokerRecord r = registration(3, 77);
  r.in_controlled_shutdown = true;
  RegisterBrokerRecord back = round_trip(r);
  EXPECT_EQ(back.broker_id, NodeId(3));
  EXPECT_EQ(back.broker_epoch, BrokerEpoch(77));
  EXPECT_EQ(back.incarnation_id, uuid_of(3));
  EXPECT_EQ(back.endpoints, r.endpoints);
  EXPECT_EQ(back.rack, "rack-3");
  EXPECT_TRUE(back.fenced);
  EXPECT_TRUE(back.in_controlled_shutdown);
  r.rack = std::nullopt;
  r.fenced = false;
  EXPECT_EQ(round_trip(r).rack, std::nullopt);
  EXPECT_FALSE(round_trip(r).fenced);
}

TEST(BrokerRecords, StateRecordsRoundTrip) {
  EXPECT_EQ(round_trip(UnregisterBrokerRecord{NodeId(2), BrokerEpoch(9)}).broker_epoch, BrokerEpoch(9));
  EXPECT_EQ(round_trip(FenceBrokerRecord{NodeId(2), BrokerEpoch(10)}).broker_id, NodeId(2));
  EXPECT_EQ(round_trip(UnfenceBrokerRecord{NodeId(5), BrokerEpoch(11)}).broker_epoch, BrokerEpoch(11));
  for (Fencing f : {Fencing::kFence, Fencing::kNone, Fencing::kUnfence}) {
    for (bool shutdown : {false, true}) {
      auto back = round_trip(BrokerRegistrationChangeRecord{NodeId(4), BrokerEpoch(12), f, shutdown});
      EXPECT_EQ(back.broker_id, NodeId(4));
      EXPECT_EQ(back.broker_epoch, BrokerEpoch(12));
      EXPECT_EQ(back.fenced, f);
      EXPECT_EQ(back.in_controlled_shutdown, shutdown);
    }
  }
}

// Kafka's type ids in the frame: 1 unregister, 7 fence, 8 unfence, 17 change.
TEST(BrokerRecords, FramesCarryKafkasTypeIds) {
  auto type_of = [](const MetadataRecord& r) { return encode_metadata_record(r)[1]; };
  EXPECT_EQ(type_of(registration(1, 1)), 0);
  EXPECT_EQ(type_of(UnregisterBrokerRecord{}), 1);
  EXPECT_EQ(type_of(FenceBrokerRecord{}), 7);
  EXPECT_EQ(type_of(UnfenceBrokerRecord{}), 8);
  EXPECT_EQ(type_of(BrokerRegistrationChangeRecord{}), 17);
  EXPECT_EQ(encode_metadata_record(registration(1, 1))[2], 1);  // RegisterBrokerRecord version 1
}

// Logs written before version 1 hold one endpoint and no liveness: they
// still replay, as an unfenced broker with one PLAINTEXT endpoint.
TEST(BrokerRecords, RegisterBrokerVersionZeroStillDecodes) {
  protocol::RegisterBrokerRecord w;
  w.broker_id = 1;
  w.broker_epoch = 4;
  w.host = "127.0.0.1";
  w.port = 9092;
  w.rack = std::nullopt;
  OutBuffer out;
  ByteWriter header(out.bytes());
  header.write_uvarint(1);
  header.write_uvarint(0);
  header.write_uvarint(0);
  protocol::Encoder e(out);
  w.encode(e, 0);
  auto decoded = decode_metadata_record(out.bytes());
  ASSERT_TRUE(decoded.ok()) << decoded.error().to_string();
  const auto& r = std::get<RegisterBrokerRecord>(*decoded);
  EXPECT_EQ(r.broker_epoch, BrokerEpoch(4));
  EXPECT_FALSE(r.fenced);
  ASSERT_EQ(r.endpoints.size(), 1u);
  EXPECT_EQ(r.endpoints[0], (BrokerEndpoint{"PLAINTEXT", "127.0.0.1", 9092, 0}));
  MetadataImage image;
  image.apply(*decoded);
  EXPECT_EQ(image.broker(NodeId(1))->port, 9092);
  EXPECT_TRUE(image.broker_active(NodeId(1)));
}

TEST(BrokerRecords, MalformedInputIsRefused) {
  const std::vector<MetadataRecord> records = {registration(1, 1), UnregisterBrokerRecord{NodeId(1), BrokerEpoch(1)},
                                               FenceBrokerRecord{NodeId(1), BrokerEpoch(1)},
                                               UnfenceBrokerRecord{NodeId(1), BrokerEpoch(1)},
                                               BrokerRegistrationChangeRecord{NodeId(1), BrokerEpoch(1),
                                                                              Fencing::kFence, true}};
  for (const MetadataRecord& r : records) {
    Bytes bytes = encode_metadata_record(r);
    for (size_t n = 0; n < bytes.size(); ++n) {
      EXPECT_FALSE(decode_metadata_record(ByteView(bytes.data(), n)).ok()) << "prefix " << n;
    }
    Bytes longer = bytes;
    longer.push_back(0);
    EXPECT_FALSE(decode_metadata_record(longer).ok());
    Bytes newer = bytes;
    newer[2] = 9;  // a record version we do not know
    EXPECT_FALSE(decode_metadata_record(newer).ok());
  }
  // A fencing change outside -1..1 (tagged field 0 of the change record).
  Bytes change = encode_metadata_record(BrokerRegistrationChangeRecord{NodeId(1), BrokerEpoch(1), Fencing::kFence});
  // The tagged section ends the body: count 1, tag 0, size 1, value 1.
  ASSERT_EQ(change.back(), 0x01);
  change.back() = 0x02;
  EXPECT_FALSE(decode_metadata_record(change).ok());
}

TEST(BrokerRecords, ImageFollowsTheBrokerLifecycle) {
  MetadataImage image;
  image.apply(registration(1, 5));
  const BrokerState* b = image.broker(NodeId(1));
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(b->fenced);
  EXPECT_FALSE(image.broker_active(NodeId(1)));
  EXPECT_EQ(b->host, "10.0.0.1");  // the first endpoint
  EXPECT_EQ(b->listeners.size(), 2u);
  EXPECT_EQ(b->incarnation_id, uuid_of(1));

  image.apply(BrokerRegistrationChangeRecord{NodeId(1), BrokerEpoch(5), Fencing::kUnfence, false});
  EXPECT_TRUE(image.broker_active(NodeId(1)));
  image.apply(BrokerRegistrationChangeRecord{NodeId(1), BrokerEpoch(5), Fencing::kNone, true});
  EXPECT_TRUE(image.broker(NodeId(1))->in_controlled_shutdown);
  EXPECT_FALSE(image.broker(NodeId(1))->fenced);
  EXPECT_FALSE(image.broker_active(NodeId(1)));
  image.apply(FenceBrokerRecord{NodeId(1), BrokerEpoch(5)});
  EXPECT_TRUE(image.broker(NodeId(1))->fenced);

  // A new incarnation: a higher epoch, fenced, out of controlled shutdown.
  image.apply(registration(1, 9));
  EXPECT_EQ(image.broker(NodeId(1))->epoch, BrokerEpoch(9));
  EXPECT_FALSE(image.broker(NodeId(1))->in_controlled_shutdown);
  image.apply(UnfenceBrokerRecord{NodeId(1), BrokerEpoch(9)});
  EXPECT_TRUE(image.broker_active(NodeId(1)));
  image.apply(UnregisterBrokerRecord{NodeId(1), BrokerEpoch(9)});
  EXPECT_EQ(image.broker(NodeId(1)), nullptr);
  EXPECT_FALSE(image.broker_active(NodeId(1)));
}

TEST(BrokerRecordsDeathTest, ImageRefusesAnEpochGoingBackOrAStaleChange) {
  MetadataImage image;
  image.apply(registration(1, 5));
  EXPECT_DEATH(image.apply(registration(1, 4)), "broker epoch went back");
  EXPECT_DEATH(image.apply(FenceBrokerRecord{NodeId(1), BrokerEpoch(4)}), "not registered with that epoch");
  EXPECT_DEATH(image.apply(UnregisterBrokerRecord{NodeId(2), BrokerEpoch(5)}), "not registered with that epoch");
}

}  // namespace
}  // namespace samsa
