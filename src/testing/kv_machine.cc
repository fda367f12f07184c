#include "testing/kv_machine.h"

#include "base/byte_reader.h"
#include "base/byte_writer.h"

namespace samsa::sim {

Bytes KvCommand::encode() const {
  Bytes out;
  ByteWriter w(out);
  w.write_u32(client);
  w.write_i64(int64_t(seq));
  w.write_i8(int8_t(op));
  w.write_i32(key);
  w.write_i64(value);
  return out;
}

std::optional<KvCommand> KvCommand::decode(ByteView data) {
  ByteReader r(data);
  KvCommand c;
  c.client = r.read_u32();
  c.seq = uint64_t(r.read_i64());
  c.op = KvOp(r.read_u8());
  c.key = r.read_i32();
  c.value = r.read_i64();
  if (!r.ok() || !r.at_end() || (c.op != KvOp::kPut && c.op != KvOp::kGet)) return std::nullopt;
  return c;
}

KvResult KvMachine::apply(const KvCommand& cmd) {
  Session& s = sessions_[cmd.client];
  if (cmd.seq <= s.seq) return KvResult{cmd.client, cmd.seq, s.value};  // a duplicate
  int64_t value;
  if (cmd.op == KvOp::kPut) {
    data_[cmd.key] = cmd.value;
    value = cmd.value;
  } else {
    value = get(cmd.key);
  }
  s = Session{cmd.seq, value};
  return KvResult{cmd.client, cmd.seq, value};
}

int64_t KvMachine::get(int32_t key) const {
  auto it = data_.find(key);
  return it == data_.end() ? 0 : it->second;
}

Bytes KvMachine::snapshot() const {
  Bytes out;
  ByteWriter w(out);
  w.write_i32(int32_t(data_.size()));
  for (auto& [k, v] : data_) {
    w.write_i32(k);
    w.write_i64(v);
  }
  w.write_i32(int32_t(sessions_.size()));
  for (auto& [c, s] : sessions_) {
    w.write_u32(c);
    w.write_i64(int64_t(s.seq));
    w.write_i64(s.value);
  }
  return out;
}

bool KvMachine::restore(ByteView snapshot) {
  ByteReader r(snapshot);
  data_.clear();
  sessions_.clear();
  int32_t n = r.read_i32();
  for (int32_t i = 0; i < n && r.ok(); ++i) {
    int32_t k = r.read_i32();
    data_[k] = r.read_i64();
  }
  n = r.read_i32();
  for (int32_t i = 0; i < n && r.ok(); ++i) {
    uint32_t c = r.read_u32();
    Session s;
    s.seq = uint64_t(r.read_i64());
    s.value = r.read_i64();
    sessions_[c] = s;
  }
  return r.ok() && r.at_end();
}

uint64_t KvMachine::hash() const {
  uint64_t h = 1469598103934665603ULL;
  auto mix = [&](uint64_t x) { h = (h ^ x) * 1099511628211ULL; };
  for (auto& [k, v] : data_) {
    mix(uint64_t(k));
    mix(uint64_t(v));
  }
  for (auto& [c, s] : sessions_) {
    mix(c);
    mix(s.seq);
    mix(uint64_t(s.value));
  }
  return h;
}

}  // namespace samsa::sim
