// The fold benchmark's baseline: what any tool must pay to change a model --
// parse the ModelProto and write it back, nothing else.
//   bnorm_proto_copy IN.onnx OUT.onnx
#include <onnx/onnx_pb.h>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <climits>
#include <cstdio>
#include <fstream>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: bnorm_proto_copy IN.onnx OUT.onnx\n");
    return 2;
  }
  onnx::ModelProto m;
  {
    std::ifstream in(argv[1], std::ios::binary);
    google::protobuf::io::IstreamInputStream raw(&in);
    google::protobuf::io::CodedInputStream coded(&raw);
    coded.SetTotalBytesLimit(INT_MAX);
    if (!m.ParseFromCodedStream(&coded)) return 2;
  }
  std::ofstream out(argv[2], std::ios::binary);
  return m.SerializeToOstream(&out) ? 0 : 2;
}
