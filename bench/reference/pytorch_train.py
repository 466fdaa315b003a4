#!/usr/bin/python3
"""The PyTorch side of `strata_bench train`: the same models, batch, optimizer and synthetic data,
timed the same way (best/median/mean ms per full training step after warm-up steps).

Optional cross-check, not part of the build: needs Debian's python3-torch.
  /usr/bin/python3 bench/reference/pytorch_train.py --model resnet20 --batch 128 --steps 20
"""
import argparse
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    """ResNet v1 basic block with a 1x1 projection shortcut on a stage's first block (as
    apps/resnet_cifar and TensorFlow's official resnet_cifar model)."""

    def __init__(self, cin, cout, stride, project):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout, eps=1e-5, momentum=0.003)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout, eps=1e-5, momentum=0.003)
        self.proj = None
        if project:
            self.proj = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                      nn.BatchNorm2d(cout, eps=1e-5, momentum=0.003))

    def forward(self, x):
        shortcut = self.proj(x) if self.proj is not None else x
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + shortcut)


def resnet(n=3):
    layers = [nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16, eps=1e-5, momentum=0.003),
              nn.ReLU()]
    cin = 16
    for i, cout in enumerate([16, 32, 64]):
        for b in range(n):
            layers.append(Block(cin, cout, 2 if (b == 0 and i > 0) else 1, b == 0))
            cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10)]
    return nn.Sequential(*layers)


def seed_cnn():
    return nn.Sequential(nn.Unflatten(1, (1, 28, 28)), nn.Conv2d(1, 32, 3), nn.ReLU(),
                         nn.Flatten(), nn.Linear(26 * 26 * 32, 128), nn.ReLU(), nn.Linear(128, 10))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", choices=["resnet20", "mnist_cnn"], default="resnet20")
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--channels_last", action="store_true")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(42)
    if a.model == "resnet20":
        model = resnet()
        x = torch.rand(a.batch, 3, 32, 32)
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    else:
        model = seed_cnn()
        x = torch.rand(a.batch, 784)
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
    if a.channels_last and x.dim() == 4:
        model = model.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)
    y = torch.randint(0, 10, (a.batch,))
    model.train()

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()

    for _ in range(a.warmup):
        step()
    times = []
    for _ in range(a.steps):
        t = time.perf_counter()
        step()
        times.append((time.perf_counter() - t) * 1e3)
    mean = statistics.mean(times)
    print(f"pytorch {torch.__version__} train: model {a.model}, batch {a.batch}, "
          f"{torch.get_num_threads()} threads, channels_last={a.channels_last}")
    print(f"samples/s  {a.batch / (mean / 1e3):.1f}")
    print(f"ms/step    mean {mean:.2f}  median {statistics.median(times):.2f}  best {min(times):.2f}")


if __name__ == "__main__":
    main()
