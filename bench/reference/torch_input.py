#!/usr/bin/python3
"""The PyTorch side of strata_input_bench: images/s of torchvision's usual CIFAR-10 training
input over the same images, as PNG files in class folders (strata_cifar10_to_tfrecord
--png_dir), printed in the same format.

Not part of the build. Debian's python3-torch (1.13) and python3-torchvision (0.14) are enough.
  /usr/bin/python3 bench/reference/torch_input.py --data_dir PNG_DIR --workers 2

The pipeline: ImageFolder(PNG_DIR/train) with RandomCrop(32, padding=4), RandomHorizontalFlip()
and ToTensor() (PIL decodes each PNG), DataLoader(batch_size=128, shuffle=True, drop_last=True,
num_workers=--workers, persistent_workers, prefetch_factor 2). Each worker process decodes,
augments and collates whole batches; the main process only receives them (torch's intra-op
threads: 1 in the workers, as DataLoader sets, and --threads in the main process). Timing as
strata_input_bench: --warmup batches (the workers start then), then --images images rounded up to
whole batches, over as many epochs as that takes.
"""
import argparse
import time

import torch
import torchvision
from torchvision import transforms


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data_dir", required=True, help="the folder holding train/<class>/*.png")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--images", type=int, default=10240)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    augment = transforms.Compose([transforms.RandomCrop(32, padding=4),
                                  transforms.RandomHorizontalFlip(), transforms.ToTensor()])
    data = torchvision.datasets.ImageFolder(a.data_dir + "/train", transform=augment)
    workers = dict(num_workers=a.workers, persistent_workers=True, prefetch_factor=2)
    loader = torch.utils.data.DataLoader(data, batch_size=a.batch, shuffle=True, drop_last=True,
                                         **(workers if a.workers > 0 else {}))

    def batches():
        while True:  # epochs, as the Strata pipeline's repeat()
            yield from loader

    it = batches()
    start = time.perf_counter()
    for _ in range(a.warmup):
        next(it)
    warmup_s = time.perf_counter() - start
    n = (a.images + a.batch - 1) // a.batch
    checksum = 0.0
    t0 = time.perf_counter()
    for _ in range(n):
        x, y = next(it)
        checksum += float(x[0, 0, 0, 0]) + float(y[0])
    seconds = time.perf_counter() - t0
    print(f"pipeline  ImageFolder PNGs -> PIL decode, RandomCrop, RandomHorizontalFlip, ToTensor "
          f"-> batch {a.batch}, {a.workers} worker(s)")
    print(f"warm-up   {a.warmup} batches in {warmup_s:.2f} s")
    print(f"images/s  {n * a.batch / seconds:.1f} ({n * a.batch} images in {seconds:.2f} s; "
          f"checksum {checksum:.3f})")


if __name__ == "__main__":
    main()
