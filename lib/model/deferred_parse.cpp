// parse_deferring (deferred.h): a walk over the protobuf wire format of a
// model file that copies every field but the large raw_data payloads of
// main-graph initializers, then lets protobuf parse what it copied.
//
//   ModelProto  field 7 (graph)        -> GraphProto
//   GraphProto  field 5 (initializer)  -> TensorProto, parsed one at a time
//   TensorProto field 9 (raw_data)     -> left in the file when large
//
// The graph is parsed without its initializers, which are then appended in
// their order: protobuf keeps repeated fields in order of appearance, so
// the result is the ModelProto a full parse gives, minus the deferred bytes.
#include <google/protobuf/io/coded_stream.h>
#include <unistd.h>

#include <climits>
#include <string>
#include <vector>

#include "model/deferred.h"

namespace bnorm {

namespace {

enum WireType { kVarint = 0, kFixed64 = 1, kLen = 2, kFixed32 = 5 };

// Reads [begin, end) of a file through a small buffer.
class Cursor {
 public:
  Cursor(int fd, uint64_t begin, uint64_t end) : fd_(fd), pos_(begin), end_(end) {}
  bool done() const { return pos_ >= end_; }
  uint64_t pos() const { return pos_; }

  bool byte(uint8_t& b) {
    if (pos_ >= end_) return false;
    if (pos_ < buf_begin_ || pos_ >= buf_begin_ + buf_.size()) {
      buf_.resize(static_cast<size_t>(std::min<uint64_t>(kBuffer, end_ - pos_)));
      const ssize_t got = ::pread(fd_, buf_.data(), buf_.size(), static_cast<off_t>(pos_));
      if (got <= 0) return false;
      buf_.resize(static_cast<size_t>(got));
      buf_begin_ = pos_;
    }
    b = static_cast<uint8_t>(buf_[pos_ - buf_begin_]);
    ++pos_;
    return true;
  }

  bool varint(uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      uint8_t b;
      if (!byte(b)) return false;
      v |= static_cast<uint64_t>(b & 0x7F) << shift;
      if (!(b & 0x80)) return true;
    }
    return false;
  }

  bool skip(uint64_t n) {
    if (n > end_ - pos_) return false;
    pos_ += n;
    return true;
  }

  // Skips the payload of a field of wire type `wt` (after its tag).
  bool skip_field(uint64_t wt) {
    uint64_t v;
    switch (wt) {
      case kVarint: return varint(v);
      case kFixed64: return skip(8);
      case kFixed32: return skip(4);
      case kLen: return varint(v) && skip(v);
      default: return false;  // groups (3, 4) and invalid types: let protobuf decide
    }
  }

  // Appends the file's bytes [from, to) to `out`.
  bool copy(uint64_t from, uint64_t to, std::string& out) const {
    const size_t at = out.size();
    out.resize(at + static_cast<size_t>(to - from));
    uint64_t done = 0;
    while (from + done < to) {
      const ssize_t got = ::pread(fd_, out.data() + at + done, static_cast<size_t>(to - from - done),
                                  static_cast<off_t>(from + done));
      if (got <= 0) return false;
      done += static_cast<uint64_t>(got);
    }
    return true;
  }

 private:
  static constexpr uint64_t kBuffer = 64 << 10;
  int fd_;
  uint64_t pos_, end_;
  std::string buf_;
  uint64_t buf_begin_ = 0;
};

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

bool parse_bytes(const std::string& bytes, google::protobuf::MessageLite& m) {
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<int>(bytes.size()));
  in.SetTotalBytesLimit(INT_MAX);
  return m.ParseFromCodedStream(&in) && in.ConsumedEntireMessage();
}

// One initializer at [begin, end): its fields but a large raw_data.
bool read_tensor(int fd, uint64_t begin, uint64_t end, const SourceFile& source, size_t threshold,
                 onnx::TensorProto& t) {
  Cursor c(fd, begin, end);
  std::string kept;
  int64_t raw_offset = -1, raw_length = 0;
  bool raw_seen = false;
  while (!c.done()) {
    const uint64_t start = c.pos();
    uint64_t tag;
    if (!c.varint(tag)) return false;
    if ((tag >> 3) == 9 && (tag & 7) == kLen) {
      if (raw_seen) return false;  // a repeated raw_data: the last one wins; leave it to protobuf
      raw_seen = true;
      uint64_t len;
      if (!c.varint(len)) return false;
      if (len >= threshold && len > 0) {
        raw_offset = static_cast<int64_t>(c.pos());
        raw_length = static_cast<int64_t>(len);
        if (!c.skip(len)) return false;
        continue;
      }
      if (!c.skip(len)) return false;
    } else if (!c.skip_field(tag & 7)) {
      return false;
    }
    if (!c.copy(start, c.pos(), kept)) return false;
  }
  if (!parse_bytes(kept, t)) return false;
  for (const auto& kv : t.external_data()) {
    if (kv.key() == kDeferredKey) return false;  // reserved: the full parse path refuses it
  }
  if (raw_offset >= 0) {
    if (t.data_location() == onnx::TensorProto_DataLocation_EXTERNAL || t.external_data_size() > 0) return false;
    set_deferred(t, source, raw_offset, raw_length);
  }
  return true;
}

}  // namespace

bool parse_deferring(const SourceFile& source, uint64_t size, size_t threshold, onnx::ModelProto& out) {
  const int fd = source_fd(source);
  Cursor c(fd, 0, size);
  std::string head, graph_rest;
  std::vector<onnx::TensorProto> initializers;
  bool graph_seen = false;
  while (!c.done()) {
    const uint64_t start = c.pos();
    uint64_t tag;
    if (!c.varint(tag)) return false;
    if ((tag >> 3) != 7 || (tag & 7) != kLen) {
      if (!c.skip_field(tag & 7) || !c.copy(start, c.pos(), head)) return false;
      continue;
    }
    if (graph_seen) return false;  // two graph fields merge: leave it to protobuf
    graph_seen = true;
    uint64_t len;
    if (!c.varint(len)) return false;
    const uint64_t g_begin = c.pos(), g_end = g_begin + len;
    if (!c.skip(len)) return false;
    Cursor g(fd, g_begin, g_end);
    while (!g.done()) {
      const uint64_t field_start = g.pos();
      uint64_t gtag;
      if (!g.varint(gtag)) return false;
      if ((gtag >> 3) == 5 && (gtag & 7) == kLen) {
        uint64_t tlen;
        if (!g.varint(tlen)) return false;
        const uint64_t t_begin = g.pos();
        if (!g.skip(tlen)) return false;
        initializers.emplace_back();
        if (!read_tensor(fd, t_begin, t_begin + tlen, source, threshold, initializers.back())) return false;
      } else if (!g.skip_field(gtag & 7) || !g.copy(field_start, g.pos(), graph_rest)) {
        return false;
      }
    }
  }
  if (graph_seen) {
    head.push_back(static_cast<char>((7 << 3) | kLen));
    put_varint(head, graph_rest.size());
    head += graph_rest;
  }
  onnx::ModelProto m;
  if (!parse_bytes(head, m)) return false;
  if (graph_seen) {
    auto* inits = m.mutable_graph()->mutable_initializer();
    inits->Reserve(static_cast<int>(initializers.size()));
    for (auto& t : initializers) *inits->Add() = std::move(t);
  }
  out = std::move(m);
  return true;
}

}  // namespace bnorm
