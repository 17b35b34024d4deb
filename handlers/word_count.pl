#!/usr/bin/env perl
# word_count.pl -- a jobq handler in Perl: count the words of the
# payload's text and print the count (kept as the run's output).
# Payload: {"text": "..."}.  Exit 65 (bad data: dead-letter now) when the
# payload is not JSON with a text; a rerun gives the same answer, so
# at-least-once delivery is harmless.
use strict;
use warnings;
use JSON::PP;

my $raw = do { local $/; <STDIN> };
my $job = eval { decode_json($raw) };
if (ref $job ne 'HASH' || !defined $job->{text} || ref $job->{text}) {
    print STDERR "word_count: payload needs a string \"text\"\n";
    exit 65;
}
my @words = split ' ', $job->{text};
printf "job %s: %d words\n", $ENV{JOBQ_JOB_ID}, scalar @words;
exit 0;
