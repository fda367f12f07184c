// ClientQuotaRecord (KRaft type 14): its metadata-log encoding round-trips
// (a default entity's null name included), and the image keeps, replaces
// and removes quota keys as Kafka's ClientQuotasImage does.
#include <gtest/gtest.h>

#include "controller/metadata_codec.h"
#include "controller/metadata_image.h"

namespace samsa {
namespace {

ClientQuotaEntity user_and_default_client(const std::string& user) {
  return ClientQuotaEntity{{"user", user}, {"client-id", std::nullopt}};
}

TEST(ClientQuotaRecord, RoundTripsThroughTheMetadataCodec) {
  ClientQuotaRecord record{user_and_default_client("alice"), "producer_byte_rate", 1048576.5, false};
  Bytes encoded = encode_metadata_record(record);
  auto decoded = decode_metadata_record(encoded);
  ASSERT_TRUE(decoded.ok()) << decoded.error().to_string();
  const auto* back = std::get_if<ClientQuotaRecord>(&*decoded);
  ASSERT_NE(back, nullptr);
  EXPECT_EQ(back->entity, record.entity);
  EXPECT_EQ(back->key, "producer_byte_rate");
  EXPECT_EQ(back->value, 1048576.5);
  EXPECT_FALSE(back->remove);
  EXPECT_EQ(encoded[1], 14);  // KRaft's ClientQuotaRecord type id, after the frame version
}

TEST(ClientQuotaRecord, TruncatedBodyIsRefused) {
  Bytes encoded = encode_metadata_record(ClientQuotaRecord{{{"ip", "10.0.0.1"}}, "connection_creation_rate", 5, false});
  for (size_t cut = 0; cut < encoded.size(); ++cut) {
    EXPECT_FALSE(decode_metadata_record(ByteView(encoded.data(), cut)).ok()) << "cut at " << cut;
  }
}

TEST(ClientQuotaImage, SetReplaceAndRemove) {
  MetadataImage image;
  ClientQuotaEntity alice = user_and_default_client("alice");
  image.apply(ClientQuotaRecord{alice, "producer_byte_rate", 100, false});
  image.apply(ClientQuotaRecord{alice, "consumer_byte_rate", 200, false});
  image.apply(ClientQuotaRecord{alice, "producer_byte_rate", 300, false});
  ASSERT_EQ(image.client_quotas().size(), 1u);
  EXPECT_EQ(image.client_quotas().at(alice).at("producer_byte_rate"), 300);
  EXPECT_EQ(image.client_quotas().at(alice).at("consumer_byte_rate"), 200);

  // The same types with a named client are another entity.
  ClientQuotaEntity named{{"user", "alice"}, {"client-id", "app"}};
  image.apply(ClientQuotaRecord{named, "request_percentage", 50, false});
  EXPECT_EQ(image.client_quotas().size(), 2u);

  image.apply(ClientQuotaRecord{alice, "producer_byte_rate", 0, true});
  EXPECT_FALSE(image.client_quotas().at(alice).contains("producer_byte_rate"));
  image.apply(ClientQuotaRecord{alice, "consumer_byte_rate", 0, true});
  EXPECT_FALSE(image.client_quotas().contains(alice)) << "an entity without keys is gone";
  image.apply(ClientQuotaRecord{alice, "consumer_byte_rate", 0, true});  // removing nothing is harmless
  EXPECT_EQ(image.client_quotas().size(), 1u);
}

}  // namespace
}  // namespace samsa
