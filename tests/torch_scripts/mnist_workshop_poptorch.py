# The workshop slides' PopTorch MNIST script (ipu-workshop-slides.txt, "IPU"): mnist_pytorch.py with the slides'
# "+" lines (poptorch.Options, poptorch.DataLoader, trainingModel / inferenceModel, detachFromDevice). Network,
# TrainingModelWithLoss and the transform are those of Graphcore's MNIST tutorial (graphcore/examples
# tutorials/simple_applications/pytorch/mnist/mnist_poptorch.py). Runs unchanged with `ipu-teach run`.
import argparse

import torch
import torch.nn as nn
import torch.optim as optim
import torchvision
import poptorch

transform_mnist = torchvision.transforms.Compose(
    [
        torchvision.transforms.ToTensor(),
        torchvision.transforms.Normalize((0.1307,), (0.3081,)),
    ]
)


class Block(nn.Module):
    def __init__(self, in_channels, num_filters, kernel_size, pool_size):
        super(Block, self).__init__()
        self.conv = nn.Conv2d(in_channels, num_filters, kernel_size=kernel_size)
        self.pool = nn.MaxPool2d(kernel_size=pool_size)
        self.relu = nn.ReLU()

    def forward(self, x):
        x = self.conv(x)
        x = self.pool(x)
        x = self.relu(x)
        return x


class Network(nn.Module):
    def __init__(self):
        super(Network, self).__init__()
        self.layer1 = Block(1, 32, 3, 2)
        self.layer2 = Block(32, 64, 3, 2)
        self.layer3 = nn.Linear(1600, 128)
        self.layer3_act = nn.ReLU()
        self.layer3_dropout = torch.nn.Dropout(0.5)
        self.layer4 = nn.Linear(128, 10)
        self.softmax = nn.Softmax(1)

    def forward(self, x):
        x = self.layer1(x)
        x = self.layer2(x)
        # Flatten layer
        x = x.view(-1, 1600)
        x = self.layer3_act(self.layer3(x))
        x = self.layer4(self.layer3_dropout(x))
        x = self.softmax(x)
        return x


class TrainingModelWithLoss(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model
        self.loss = torch.nn.CrossEntropyLoss()

    def forward(self, args, labels=None):
        output = self.model(args)
        if labels is None:
            return output
        else:
            loss = self.loss(output, labels)
            return output, loss


def accuracy(predictions, labels):
    _, ind = torch.max(predictions, 1)
    # provide labels only for samples, where prediction is available (during the training, not every samples prediction is returned for efficiency reasons)
    labels = labels[-predictions.size()[0] :]
    accuracy = torch.sum(torch.eq(ind, labels)).item() / labels.size(0) * 100.0
    return accuracy


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="MNIST training in PopTorch")
    parser.add_argument("--batch-size", type=int, default=8, help="batch size for training (default: 8)")
    parser.add_argument("--test-batch-size", type=int, default=8, help="batch size for testing (default: 8)")
    parser.add_argument("--epochs", type=int, default=10, help="number of epochs to train (default: 10)")
    parser.add_argument("--lr", type=float, default=0.05, help="learning rate (default: 0.05)")
    parser.add_argument("--device-iterations", type=int, default=50, help="device iterations (default: 50)")

    args = parser.parse_args()

    opts = poptorch.Options().deviceIterations(args.device_iterations)
    training_data = poptorch.DataLoader(
        opts,
        torchvision.datasets.MNIST("mnist_data/", train=True, download=True, transform=transform_mnist),
        batch_size=args.batch_size,
        shuffle=True,
        drop_last=True,
    )

    test_data = poptorch.DataLoader(
        opts,
        torchvision.datasets.MNIST("mnist_data/", train=False, download=True, transform=transform_mnist),
        batch_size=args.batch_size,
        shuffle=True,
        drop_last=True,
    )

    model = Network()
    training_model = TrainingModelWithLoss(model)
    optimizer = optim.SGD(model.parameters(), lr=args.lr)
    training_model = poptorch.trainingModel(training_model, opts, optimizer=optimizer)
    inference_model = poptorch.inferenceModel(model)

    # Run training
    for _ in range(args.epochs):
        for data, labels in training_data:
            preds, losses = training_model(data, labels)

    # Detach the training model so that the same IPU could be used for validation
    training_model.detachFromDevice()

    # Run validation
    sum_acc = 0.0
    with torch.no_grad():
        for data, labels in test_data:
            output = inference_model(data)
            sum_acc += accuracy(output, labels)
    print("Accuracy on test set: {:.2f}%".format(sum_acc / len(test_data)))
