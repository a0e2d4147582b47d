# Exercise 2 (solution): at sequence length 384 each sequence has three times the tokens, so every activation is
# three times larger and the attention scores (heads x sequence x sequence for each sequence) nine times: fewer
# sequences fit in a micro-batch, and each takes longer. The notebook's IPUs are back afterwards.
import functools

with ipu.system.restored_afterwards():
    for bert_sequence in (128, 384):
        bert_largest, bert_rate, bert_batch = None, None, 1
        while True:
            bert_model = functools.partial(bert_encoder, sequence=bert_sequence)
            bert_sizing = size(bert_model, bert_batch, mode="predict", loss="mse")
            if not bert_sizing.fits:
                break
            bert_largest, bert_rate = bert_batch, bert_sizing.samples_per_second
            bert_batch *= 2
        print(
            f"sequence {bert_sequence}: micro-batch {bert_largest} fits ({bert_batch} does not), "
            f"{bert_rate:,.1f} sequences/s = {bert_rate * bert_sequence:,.0f} tokens/s"
        )
