// placeholder: filled in by the sqs work
