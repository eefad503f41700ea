#!/usr/bin/python3
"""Writes two whole networks for the speed comparison with onnxruntime
(bench/model_speed.sh), float32, opset 13, weights from numpy's
default_rng(0) (deterministic: the same bytes on every run):

  resnet.onnx     ResNet-18 layout at 1x3x224x224: 7x7/2 Conv + BN + Relu,
                  MaxPool, 4 stages of 2 basic blocks (3x3 Conv-BN-Relu-Conv-BN,
                  1x1/2 Conv-BN projection where the shape changes, Add, Relu)
                  of 64/128/256/512 channels, GlobalAveragePool, Flatten, Gemm
                  to 1000 (1.8 G multiply-adds).
  detection.onnx  a one-stage detector at 1x3x320x320: a MobileNet-style
                  backbone (3x3/2 Conv, then depthwise 3x3 + pointwise 1x1
                  blocks with BN and Relu, to stride 32), a feature pyramid
                  (1x1 laterals, nearest Resize x2, Add, 3x3 smoothing), and
                  per level a 3x3 head to 3 anchors x (4 box + 1 score + 20
                  classes), Transposed, Reshaped and Concatenated to
                  [1, anchors, 25] with a Sigmoid on the scores.
  yolo_int8.onnx  dynamically quantized YOLOv8n-style network at 1x3x640x640:
                  every Conv is DynamicQuantizeLinear (uint8) + ConvInteger
                  (int8 weights, zero point 0) + Cast to float, times the
                  scale product, + bias, then SiLU (x * Sigmoid(x)); the
                  backbone (3x3/2 Convs to stride 32, C2f blocks of split,
                  bottlenecks with residual Adds and Concat, SPPF's MaxPools)
                  of 16..256 channels, and a top-down neck (nearest Resize
                  x2, Concat, C2f) to a 1x1 head of 144 channels at stride 8
                  (36 ConvIntegers, 2.1 G multiply-adds).
  resnet_qdq.onnx ResNet-18 layout at 1x3x224x224 (BN folded into the Convs'
                  biases) in QDQ form: every Conv's input passes through
                  QuantizeLinear + DequantizeLinear (uint8, static scales),
                  its weights are int8 initializers behind a per-channel
                  DequantizeLinear; the Convs themselves are float (1.8 G
                  multiply-adds).

    /usr/bin/python3 bench/gen_nets.py OUT_DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Net:
    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.n = [], [], 0

    def name(self, kind):
        self.n += 1
        return f"{kind}{self.n}"

    def const(self, array, kind="w"):
        nm = self.name(kind)
        self.inits.append(numpy_helper.from_array(np.asarray(array), nm))
        return nm

    def node(self, op, inputs, **attrs):
        out = self.name(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def conv(self, x, cin, cout, k, stride=1, group=1, bias=False):
        fan_in = cin // group * k * k
        w = (self.rng.standard_normal((cout, cin // group, k, k)) * np.sqrt(2.0 / fan_in)).astype(np.float32)
        ins = [x, self.const(w)]
        if bias:
            ins.append(self.const(self.rng.uniform(-0.1, 0.1, cout).astype(np.float32), "b"))
        p = k // 2
        return self.node("Conv", ins, kernel_shape=[k, k], strides=[stride, stride], pads=[p, p, p, p], group=group)

    def bn(self, x, c):
        r = self.rng
        params = [r.uniform(0.5, 1.5, c), r.uniform(-0.1, 0.1, c), r.uniform(-0.1, 0.1, c), r.uniform(0.5, 1.5, c)]
        return self.node("BatchNormalization", [x] + [self.const(p.astype(np.float32), "bn") for p in params])

    def cbr(self, x, cin, cout, k, stride=1, group=1, relu=True):
        y = self.bn(self.conv(x, cin, cout, k, stride, group), cout)
        return self.node("Relu", [y]) if relu else y

    def nodes_n(self, op, inputs, n, **attrs):
        """A node of n outputs."""
        base = self.name(op.lower())
        outs = [f"{base}_{i}" for i in range(n)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=base, **attrs))
        return outs

    def weights(self, cin, cout, k):
        fan_in = cin * k * k
        return (self.rng.standard_normal((cout, cin, k, k)) * np.sqrt(2.0 / fan_in)).astype(np.float32)

    def save(self, path, graph_name, shape, out, out_shape):
        g = helper.make_graph(self.nodes, graph_name, [helper.make_tensor_value_info("input", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info(out, TensorProto.FLOAT, out_shape)], self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="bnorm-bench")
        m.ir_version = 7
        onnx.checker.check_model(m)
        onnx.save(m, path)


def resnet18(net, path, name, conv):
    """ResNet-18 at 224x224 with conv(x, cin, cout, k, stride, relu) for each Conv (+ BN) (+ Relu)."""
    x = conv("input", 3, 64, 7, 2, True)
    x = net.node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 64
    for stage, cout in enumerate([64, 128, 256, 512]):
        for block in range(2):
            stride = 2 if stage > 0 and block == 0 else 1
            y = conv(x, cin, cout, 3, stride, True)
            y = conv(y, cout, cout, 3, 1, False)
            short = conv(x, cin, cout, 1, stride, False) if (stride != 1 or cin != cout) else x
            x = net.node("Relu", [net.node("Add", [y, short])])
            cin = cout
    x = net.node("Flatten", [net.node("GlobalAveragePool", [x])])
    w = (net.rng.standard_normal((1000, 512)) * 0.05).astype(np.float32)
    x = net.node("Gemm", [x, net.const(w), net.const(np.zeros(1000, np.float32), "b")], transB=1)
    net.save(path, name, [1, 3, 224, 224], x, [1, 1000])


def resnet(path):
    net = Net(0)
    resnet18(net, path, "resnet", lambda x, cin, cout, k, stride, relu: net.cbr(x, cin, cout, k, stride, relu=relu))


def detection(path):
    net = Net(1)
    x = net.cbr("input", 3, 32, 3, 2)
    cin, feats = 32, []
    # (channels, stride) of the depthwise-separable blocks; stride 8, 16, 32 levels feed the pyramid.
    for cout, stride in [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1), (512, 1),
                         (1024, 2), (1024, 1)]:
        x = net.cbr(x, cin, cin, 3, stride, group=cin)
        x = net.cbr(x, cin, cout, 1)
        cin = cout
        if stride == 2 and cout >= 256:
            feats.append((x, cout))
        elif stride == 1 and feats and feats[-1][1] == cout:
            feats[-1] = (x, cout)
    lat = [net.conv(f, c, 128, 1, bias=True) for f, c in feats]
    scales = net.const(np.array([1, 1, 2, 2], np.float32), "s")
    for i in range(len(lat) - 2, -1, -1):
        up = net.node("Resize", [lat[i + 1], "", scales], mode="nearest")
        lat[i] = net.node("Add", [lat[i], up])
    outs = []
    for f in lat:
        f = net.cbr(f, 128, 128, 3)
        h = net.conv(f, 128, 3 * 25, 3, bias=True)
        h = net.node("Transpose", [h], perm=[0, 2, 3, 1])
        outs.append(net.node("Reshape", [h, net.const(np.array([1, -1, 25], np.int64), "shape")]))
    y = net.node("Concat", outs, axis=1)
    boxes = net.node("Slice", [y, net.const(np.array([0], np.int64), "i"), net.const(np.array([4], np.int64), "i"),
                               net.const(np.array([2], np.int64), "i")])
    rest = net.node("Slice", [y, net.const(np.array([4], np.int64), "i"), net.const(np.array([25], np.int64), "i"),
                              net.const(np.array([2], np.int64), "i")])
    y = net.node("Concat", [boxes, net.node("Sigmoid", [rest])], axis=2)
    anchors = 3 * sum((320 // s) ** 2 for s in (8, 16, 32))
    net.save(path, "detection", [1, 3, 320, 320], y, [1, anchors, 25])


class IntNet(Net):
    """yolo_int8's layers: Convs dynamically quantized to ConvInteger."""

    def qconv(self, x, cin, cout, k, stride=1):
        w = self.weights(cin, cout, k)
        ws = np.float32(np.abs(w).max() / 127)
        wq = np.clip(np.rint(w / ws), -127, 127).astype(np.int8)
        xq, xs, xz = self.nodes_n("DynamicQuantizeLinear", [x], 3)
        p = k // 2
        acc = self.node("ConvInteger", [xq, self.const(wq), xz, self.const(np.array(0, np.int8), "wz")],
                        kernel_shape=[k, k], strides=[stride, stride], pads=[p, p, p, p])
        scale = self.node("Mul", [xs, self.const(np.array(ws, np.float32), "ws")])
        y = self.node("Mul", [self.node("Cast", [acc], to=TensorProto.FLOAT), scale])
        bias = self.rng.uniform(-0.1, 0.1, (1, cout, 1, 1)).astype(np.float32)
        y = self.node("Add", [y, self.const(bias, "b")])
        return self.node("Mul", [y, self.node("Sigmoid", [y])])

    def c2f(self, x, cin, cout, n, shortcut=True):
        h = cout // 2
        y = self.qconv(x, cin, cout, 1)
        parts = self.nodes_n("Split", [y, self.const(np.array([h, h], np.int64), "split")], 2, axis=1)
        last = parts[1]
        for _ in range(n):
            b = self.qconv(self.qconv(last, h, h, 3), h, h, 3)
            last = self.node("Add", [last, b]) if shortcut else b
            parts.append(last)
        return self.qconv(self.node("Concat", parts, axis=1), (2 + n) * h, cout, 1)

    def sppf(self, x, c):
        y = self.qconv(x, c, c // 2, 1)
        pools = [y]
        for _ in range(3):
            pools.append(self.node("MaxPool", [pools[-1]], kernel_shape=[5, 5], strides=[1, 1], pads=[2, 2, 2, 2]))
        return self.qconv(self.node("Concat", pools, axis=1), 2 * c, c, 1)


def yolo_int8(path):
    net = IntNet(2)
    x = net.qconv("input", 3, 16, 3, 2)
    x = net.qconv(x, 16, 32, 3, 2)
    x = net.c2f(x, 32, 32, 1)
    x = net.qconv(x, 32, 64, 3, 2)
    p3 = net.c2f(x, 64, 64, 2)
    x = net.qconv(p3, 64, 128, 3, 2)
    p4 = net.c2f(x, 128, 128, 2)
    x = net.qconv(p4, 128, 256, 3, 2)
    x = net.sppf(net.c2f(x, 256, 256, 1), 256)
    scales = net.const(np.array([1, 1, 2, 2], np.float32), "s")
    x = net.node("Resize", [x, "", scales], mode="nearest")
    x = net.c2f(net.node("Concat", [x, p4], axis=1), 384, 128, 1, shortcut=False)
    x = net.node("Resize", [x, "", scales], mode="nearest")
    x = net.c2f(net.node("Concat", [x, p3], axis=1), 192, 64, 1, shortcut=False)
    x = net.qconv(x, 64, 144, 1)
    net.save(path, "yolo_int8", [1, 3, 640, 640], x, [1, 144, 80, 80])


class QdqNet(Net):
    """resnet_qdq's layers: float Convs between QuantizeLinear/DequantizeLinear."""

    def qdq(self, x, scale, zp):
        s, z = self.const(np.array(scale, np.float32), "qs"), self.const(np.array(zp, np.uint8), "qz")
        return self.node("DequantizeLinear", [self.node("QuantizeLinear", [x, s, z]), s, z])

    def conv_qdq(self, x, cin, cout, k, stride=1, relu=True, in_zp=0):
        w = self.weights(cin, cout, k)
        ws = (np.abs(w).reshape(cout, -1).max(axis=1) / 127).astype(np.float32)
        wq = np.clip(np.rint(w / ws[:, None, None, None]), -127, 127).astype(np.int8)
        wd = self.node("DequantizeLinear", [self.const(wq), self.const(ws, "ws"),
                                            self.const(np.zeros(cout, np.int8), "wz")], axis=0)
        p = k // 2
        y = self.node("Conv", [self.qdq(x, 0.03, in_zp), wd, self.const(self.rng.uniform(-0.1, 0.1, cout).astype(np.float32), "b")],
                      kernel_shape=[k, k], strides=[stride, stride], pads=[p, p, p, p])
        return self.node("Relu", [y]) if relu else y


def resnet_qdq(path):
    net = QdqNet(3)
    # The input is quantized with zero point 128, every later activation with 0.
    resnet18(net, path, "resnet_qdq", lambda x, cin, cout, k, stride, relu: net.conv_qdq(
        x, cin, cout, k, stride, relu=relu, in_zp=128 if x == "input" else 0))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    resnet(os.path.join(out, "resnet.onnx"))
    detection(os.path.join(out, "detection.onnx"))
    yolo_int8(os.path.join(out, "yolo_int8.onnx"))
    resnet_qdq(os.path.join(out, "resnet_qdq.onnx"))


if __name__ == "__main__":
    main()
