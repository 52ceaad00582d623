"""Dates without a year point where their clause points; numeric dates; a named date in recall.

Every case is retained through the public API and checked on what is stored
(``bank.memories()``'s occurrence), not only on what recall returns.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentmem
from agentmem.errors import InvalidInputError

FEB_20 = "2025-02-20T10:00:00Z"  # a Thursday, before the dates most cases name
MAR_10 = "2025-03-10T10:00:00Z"  # on or after them
DEC_28 = "2024-12-28T10:00:00Z"  # a year boundary ahead
JAN_03 = "2025-01-03T10:00:00Z"  # a year boundary behind

# (text, said at, first day, last day) of the stored occurrence.
CASES: list[tuple[str, str, str, str]] = [
    # The table: plans, deadlines and schedules said before their date.
    ("The invoice is due on March 3.", FEB_20, "2025-03-03", "2025-03-03"),
    ("We will launch in April.", FEB_20, "2025-04-01", "2025-04-30"),
    ("I'm planning a trip to Kyoto in April.", FEB_20, "2025-04-01", "2025-04-30"),
    ("My birthday is on May 12.", FEB_20, "2025-05-12", "2025-05-12"),
    ("The release is scheduled for Q2.", FEB_20, "2025-04-01", "2025-06-30"),
    ("I'll see the dentist on the 28th.", FEB_20, "2025-02-28", "2025-02-28"),
    # Forward, said before the date.
    ("We're going to visit Lisbon in the summer.", FEB_20, "2025-06-01", "2025-08-31"),
    ("I'm flying to Kyoto on March 3.", FEB_20, "2025-03-03", "2025-03-03"),
    ("Our anniversary is on January 10.", FEB_20, "2026-01-10", "2026-01-10"),
    ("The upcoming audit is in November.", FEB_20, "2025-11-01", "2025-11-30"),
    ("The next board meeting is on the 5th of March.", FEB_20, "2025-03-05", "2025-03-05"),
    ("We'll celebrate at Christmas.", FEB_20, "2025-12-24", "2025-12-26"),
    ("I'll be there on Halloween.", FEB_20, "2025-10-31", "2025-10-31"),
    ("We'll move in the fall.", FEB_20, "2025-09-01", "2025-11-30"),
    ("The rent is due on the 5th.", FEB_20, "2025-03-05", "2025-03-05"),
    ("We will meet on the 20th.", FEB_20, FEB_20, "2025-02-20"),
    ("I'll call you on the 31st.", FEB_20, "2025-03-31", "2025-03-31"),
    ("The workshop will take place in the third quarter.", FEB_20, "2025-07-01", "2025-09-30"),
    ("We are hosting the party on Valentine's Day.", FEB_20, "2026-02-14", "2026-02-14"),
    ("Bring the signed forms on 10 March.", FEB_20, "2025-03-10", "2025-03-10"),
    (
        "Nora: we're planning a trip to Porto on the 12th of March",
        FEB_20,
        "2025-03-12",
        "2025-03-12",
    ),
    ("The next invoice will be due on the 10th of February.", FEB_20, "2026-02-10", "2026-02-10"),
    ("I want to visit Rome in June.", FEB_20, "2025-06-01", "2025-06-30"),
    ("Kenji's daughter Aiko starts kindergarten in September.", FEB_20, "2025-09-01", "2025-09-30"),
    ("We meet the contractor on Thursday.", FEB_20, "2025-02-27", "2025-02-27"),
    ("Mark takes the bar exam in July.", FEB_20, "2025-07-01", "2025-07-31"),
    ("I've been planning a trip to Oslo in July.", FEB_20, "2025-07-01", "2025-07-31"),
    # What someone agreed, promised or arranged to do is to come, though told in the past;
    # a pluperfect tells of the one before.
    ("We agreed to meet on Sunday.", FEB_20, "2025-02-23", "2025-02-23"),
    ("She promised to call on Monday.", FEB_20, "2025-02-24", "2025-02-24"),
    ("We had agreed to meet on Sunday.", FEB_20, "2025-02-16", "2025-02-16"),
    # Chat spellings of the days around today.
    ("gonna see mom tmrw", FEB_20, "2025-02-21", "2025-02-21"),
    ("went to the gym yday", FEB_20, "2025-02-19", "2025-02-19"),
    ("meeting w/ sarah on thurs", FEB_20, "2025-02-27", "2025-02-27"),
    ("My mum's bday is on the 9th of march", FEB_20, "2025-03-09", "2025-03-09"),
    ("my bf and i broke up last wk", FEB_20, "2025-02-10", "2025-02-16"),
    ("See you on 14.03.", FEB_20, "2025-03-14", "2025-03-14"),
    ("the party's on sat nite", FEB_20, "2025-02-22T18:00:00Z", "2025-02-23"),
    # "'s" before a progressive passive is "is", not a perfect's "has" (last May before).
    ("Lena told me she's getting married in May.", FEB_20, "2025-05-01", "2025-05-31"),
    ("The car's being fixed on Monday.", FEB_20, "2025-02-24", "2025-02-24"),
    # A timetable's present, which the small model reads as a plural noun ("flight leaves").
    ("My flight leaves on Monday.", FEB_20, "2025-02-24", "2025-02-24"),
    ("The train departs at 9 on Tuesday.", FEB_20, "2025-02-25", "2025-02-25"),
    ("My bus leaves at 7 on Friday.", FEB_20, "2025-02-21", "2025-02-21"),
    # ... after a subject that says where it goes or comes from, or before a bare day.
    ("My flight to Tokyo leaves on Friday.", FEB_20, "2025-02-21", "2025-02-21"),
    ("His flight from Rome lands on Saturday.", FEB_20, "2025-02-22", "2025-02-22"),
    ("Our flight back lands Sunday.", FEB_20, "2025-02-23", "2025-02-23"),
    ("My flight leaves Friday.", FEB_20, "2025-02-21", "2025-02-21"),
    # ... after a subject with a number: a version's release.
    ("Version 2.3 ships on 12/03.", FEB_20, "2025-12-03", "2025-12-03"),
    # A work deadline: today, this week.
    ("I'll send the slides by EOD.", FEB_20, FEB_20, "2025-02-20"),
    ("I'll have the draft by EOW.", FEB_20, FEB_20, "2025-02-23"),
    # Half a year ahead; "We built it in half a year" is how long it took (NOT_DATES).
    ("The lease ends in half a year.", FEB_20, "2025-08-01", "2025-08-31"),
    ("iOS 18 ships in September.", FEB_20, "2025-09-01", "2025-09-30"),
    # "this <name>" told in the past is the one begun, not one to come; what was planned,
    # booked or set out to do then stays ahead.
    ("We went camping this weekend.", FEB_20, "2025-02-15", "2025-02-16"),
    ("I visited my aunt this Saturday.", FEB_20, "2025-02-15", "2025-02-15"),
    ("Phoenix was so hot this summer.", FEB_20, "2024-06-01", "2024-08-31"),
    ("We celebrated this Christmas with family.", FEB_20, "2024-12-24", "2024-12-26"),
    ("We're going camping this weekend.", FEB_20, "2025-02-22", "2025-02-23"),
    ("I decided to go to Spain this summer.", FEB_20, "2025-06-01", "2025-08-31"),
    ("We planned a party this Saturday.", FEB_20, "2025-02-22", "2025-02-22"),
    # Past, said after the date.
    ("I paid the invoice on March 3.", FEB_20, "2024-03-03", "2024-03-03"),
    ("We launched in April.", FEB_20, "2024-04-01", "2024-04-30"),
    ("I went to Kyoto in April.", FEB_20, "2024-04-01", "2024-04-30"),
    ("I saw the dentist on the 28th.", FEB_20, "2025-01-28", "2025-01-28"),
    ("We visited Lisbon in the summer.", FEB_20, "2024-06-01", "2024-08-31"),
    ("The release shipped in Q2.", FEB_20, "2024-04-01", "2024-06-30"),
    ("We celebrated at Christmas.", FEB_20, "2024-12-24", "2024-12-26"),
    ("I was born on May 12.", FEB_20, "2024-05-12", "2024-05-12"),
    ("I've been to Kyoto in April.", FEB_20, "2024-04-01", "2024-04-30"),
    ("The invoice was due on February 10.", FEB_20, "2025-02-10", "2025-02-10"),
    ("The rent was due on the 5th.", FEB_20, "2025-02-05", "2025-02-05"),
    ("We met on the 31st.", FEB_20, "2025-01-31", "2025-01-31"),
    ("Sales grew in the third quarter.", FEB_20, "2024-07-01", "2024-09-30"),
    ("We hosted the party on Valentine's Day.", FEB_20, "2025-02-14", "2025-02-14"),
    ("I love the painting I did in May.", FEB_20, "2024-05-01", "2024-05-31"),
    ("I was planning a trip to Oslo in July.", FEB_20, "2024-07-01", "2024-07-31"),
    ("The beach photos from Monday.", FEB_20, "2025-02-17", "2025-02-17"),  # a noun stays
    # A range after a simple present is scheduled like its ends: one direction for both.
    ("The course runs from May 3 to May 5.", FEB_20, "2025-05-03", "2025-05-05"),
    ("The shop is closed between March 3 and March 5.", FEB_20, "2025-03-03", "2025-03-05"),
    ("The course ran from May 3 to May 5.", FEB_20, "2024-05-03", "2024-05-05"),
    # A date opening its clause, then a simple present: a schedule, so the coming date
    # (the last one before); a state, a past and a thing's quality stay as they were.
    ("On Friday we fly to Rome.", FEB_20, "2025-02-21", "2025-02-21"),
    ("On Monday Beatriz starts at Accenture.", FEB_20, "2025-02-24", "2025-02-24"),
    ("In March we move to Leeds.", FEB_20, "2025-03-01", "2025-03-31"),
    ("In April we're in Lisbon.", FEB_20, "2025-04-01", "2025-04-30"),
    ("On Monday Beatriz started at Accenture.", FEB_20, "2025-02-17", "2025-02-17"),
    ("In June I love the garden.", FEB_20, "2024-06-01", "2024-06-30"),
    ("In spring the parks are lovely.", FEB_20, "2024-03-01", "2024-05-31"),
    # "'s" before a participle no finite verb follows is "is": a progressive (last New
    # Year's Eve before); "over" dates a scheduled present as "in" does (last Christmas).
    ("Tim's flying back from Sydney on New Year's Eve.", FEB_20, "2025-12-31", "2025-12-31"),
    ("Mum's cooking on Sunday was great.", FEB_20, "2025-02-16", "2025-02-16"),
    ("The clinic closes for two weeks over Christmas.", FEB_20, "2025-12-24", "2025-12-26"),
    ("We stayed with Mum over Christmas.", FEB_20, "2024-12-24", "2024-12-26"),
    # What slipped to a date is moved there; a month after "to" is a date only then.
    ("The Lantern launch slipped to Thursday.", FEB_20, "2025-02-27", "2025-02-27"),
    ("The release was moved to March.", FEB_20, "2025-03-01", "2025-03-31"),
    ("I slipped on the ice on Monday.", FEB_20, "2025-02-17", "2025-02-17"),
    # A time that describes a noun gives way to the one that dates the clause (Q3 2024
    # before); alone it still dates it, and a noun after a date makes no scheduled present.
    ("The Q3 roadmap review is on the 12th.", FEB_20, "2025-03-12", "2025-03-12"),
    ("The Q3 numbers look great.", FEB_20, "2024-07-01", "2024-09-30"),
    # A named day said to be some time away is that day (the weeks counted before); a day
    # with no name is as far ahead as said.
    ("Christmas is still a few weeks away.", FEB_20, "2025-12-24", "2025-12-26"),
    ("My birthday is two weeks away.", FEB_20, "2025-03-03", "2025-03-09"),
    # The second, third or fourth week of a month (the whole month before).
    ("The review is scheduled for the second week of April.", FEB_20, "2025-04-08", "2025-04-14"),
    ("We met in the third week of January.", FEB_20, "2025-01-15", "2025-01-21"),
    # Days of one month written once: the whole stay, not its last day.
    ("Booked the hotel in Rome for 12-15 May.", FEB_20, "2025-05-12", "2025-05-15"),
    ("The conference runs May 12-15.", FEB_20, "2025-05-12", "2025-05-15"),
    ("We'll be away from 12 to 15 May.", FEB_20, "2025-05-12", "2025-05-15"),
    ("The exhibition runs from the 3rd to the 9th of June.", FEB_20, "2025-06-03", "2025-06-09"),
    ("I was in Paris 3-5 January.", FEB_20, "2025-01-03", "2025-01-05"),
    ("We stayed there between 3 and 7 June.", FEB_20, "2024-06-03", "2024-06-07"),
    ("We were in Crete 28 April - 2 May.", FEB_20, "2024-04-28", "2024-05-02"),
    ("The workshop is 9–11 March 2026.", FEB_20, "2026-03-09", "2026-03-11"),
    # A count after a date is no day ("May 12 to 15 people").
    ("On May 12 to 15 people came.", FEB_20, "2024-05-12", "2024-05-12"),
    # What suits whom is said of a time to come (these were last year's).
    ("Mid-March works best for the offsite.", FEB_20, "2025-03-11", "2025-03-20"),
    ("The offsite works best in mid-March.", FEB_20, "2025-03-11", "2025-03-20"),
    ("Early April suits me.", FEB_20, "2025-04-01", "2025-04-10"),
    ("Early April works fine for me.", FEB_20, "2025-04-01", "2025-04-10"),
    ("Late May is when we launch.", FEB_20, "2025-05-21", "2025-05-31"),
    # ... not what worked, nor how a thing works at a time of year.
    ("Last March worked best for us.", FEB_20, "2024-03-01", "2024-03-31"),
    ("In June the garden works well.", FEB_20, "2024-06-01", "2024-06-30"),
    # A day with a time of day: that hour, ahead unless the clause says it is past; the
    # day alone when the time says neither morning nor evening ("at 8").
    ("The call is Tuesday at 3pm.", FEB_20, "2025-02-25T15:00:00Z", "2025-02-25T16:00:00Z"),
    ("Dinner Friday at 8?", FEB_20, "2025-02-21", "2025-02-21"),
    ("It got moved to Tuesday at 3pm.", FEB_20, "2025-02-25T15:00:00Z", "2025-02-25T16:00:00Z"),
    ("I saw him Tuesday at 3pm.", FEB_20, "2025-02-18T15:00:00Z", "2025-02-18T16:00:00Z"),
    # The day something is booked for is ahead, whatever the tense of the booking.
    ("Mum's surgery is scheduled for the 21st.", FEB_20, "2025-02-21", "2025-02-21"),
    ("We reserved the hall for Saturday.", FEB_20, "2025-02-22", "2025-02-22"),
    # Said on the named date or after it.
    ("The next invoice will be due on March 3.", MAR_10, "2026-03-03", "2026-03-03"),
    ("I paid the invoice on March 3.", MAR_10, "2025-03-03", "2025-03-03"),
    # A period holding the moment it is said in: what was done is before that moment, what
    # is to be done after it; a present tense alone (a state, a timetable) keeps it whole.
    ("We'll launch in March.", MAR_10, MAR_10, "2025-03-31"),
    ("We launched in March.", MAR_10, "2025-03-01", MAR_10),
    ("I'll see the dentist on the 10th.", MAR_10, MAR_10, "2025-03-10"),
    ("I started a new job this year.", MAR_10, "2025-01-01", MAR_10),
    ("I went to the gym this morning.", MAR_10, "2025-03-10T06:00:00Z", MAR_10),
    ("I'll go to the gym this week.", MAR_10, MAR_10, "2025-03-16"),
    ("The invoice is due this month.", MAR_10, MAR_10, "2025-03-31"),
    ("I saw the dentist on the 10th.", MAR_10, "2025-03-10", "2025-03-10"),
    ("I'll see the dentist on the 3rd.", MAR_10, "2025-04-03", "2025-04-03"),
    ("I saw the dentist on the 12th.", MAR_10, "2025-02-12", "2025-02-12"),
    ("My birthday is on March 10.", MAR_10, "2025-03-10", "2025-03-10"),
    ("My birthday is on March 3.", MAR_10, "2026-03-03", "2026-03-03"),
    ("My birthday was on March 3.", MAR_10, "2025-03-03", "2025-03-03"),
    ("We're planning a trip to Porto in the spring.", MAR_10, MAR_10, "2025-05-31"),
    # An amount counted from a day: the day after it, or how long from then.
    ("We're in Rome for two weeks starting Friday.", FEB_20, "2025-02-21", "2025-03-06"),
    ("The deadline is a week from Friday.", FEB_20, "2025-02-28", "2025-02-28"),
    # All of a period holding the moment said, on its clause's side of that moment.
    ("I've been sick all week.", MAR_10, "2025-03-10", MAR_10),
    # "Later" and "earlier" before the period say the side, whatever the tense.
    ("Later this year we're renovating the kitchen.", MAR_10, MAR_10, "2025-12-31"),
    ("Later this month I'm seeing the dentist.", MAR_10, MAR_10, "2025-03-31"),
    ("We're renovating the kitchen later this year.", MAR_10, MAR_10, "2025-12-31"),
    ("Earlier this month I'm told it snowed.", MAR_10, "2025-03-01", MAR_10),
    # A range holding the day it is said in: this year's.
    ("The exhibition runs from March 1 to March 30.", MAR_10, "2025-03-01", "2025-03-30"),
    ("I booked a table for the 3rd.", MAR_10, "2025-04-03", "2025-04-03"),
    ("I booked the flights in January.", MAR_10, "2025-01-01", "2025-01-31"),
    ("We went skiing in the winter.", MAR_10, "2024-12-01", "2025-02-28"),
    # A year boundary ahead.
    ("We will launch in January.", DEC_28, "2025-01-01", "2025-01-31"),
    ("We launched in January.", DEC_28, "2024-01-01", "2024-01-31"),
    ("The invoice is due on January 5.", DEC_28, "2025-01-05", "2025-01-05"),
    ("I paid the invoice on January 5.", DEC_28, "2024-01-05", "2024-01-05"),
    ("I'll see the dentist on the 3rd.", DEC_28, "2025-01-03", "2025-01-03"),
    ("I saw the dentist on the 3rd.", DEC_28, "2024-12-03", "2024-12-03"),
    ("The release is scheduled for Q1.", DEC_28, "2025-01-01", "2025-03-31"),
    ("The release shipped in Q4.", DEC_28, "2024-10-01", DEC_28),
    ("We'll celebrate on New Year's Eve.", DEC_28, "2024-12-31", "2024-12-31"),
    ("We'll ski in the winter.", DEC_28, DEC_28, "2025-02-28"),
    ("We skied in February.", DEC_28, "2024-02-01", "2024-02-29"),
    ("We're going to ski in February.", DEC_28, "2025-02-01", "2025-02-28"),
    # A year boundary behind.
    ("We celebrated at Christmas.", JAN_03, "2024-12-24", "2024-12-26"),
    ("I'll be in Paris in December.", JAN_03, "2025-12-01", "2025-12-31"),
    ("I was in Paris in December.", JAN_03, "2024-12-01", "2024-12-31"),
    ("The payment will arrive on December 30.", JAN_03, "2025-12-30", "2025-12-30"),
    ("The payment arrived on December 30.", JAN_03, "2024-12-30", "2024-12-30"),
    ("I'm starting the new job on the 6th.", JAN_03, "2025-01-06", "2025-01-06"),
    ("I'll pay on Feb 10th.", JAN_03, "2025-02-10", "2025-02-10"),
    # Numbers: a written year wins over any tense.
    ("The invoice is due on 2025-03-03.", FEB_20, "2025-03-03", "2025-03-03"),
    ("The invoice is due on 3/4/2025.", FEB_20, "2025-03-04", "2025-03-04"),
    ("The invoice is due on 03.04.2025.", FEB_20, "2025-04-03", "2025-04-03"),
    ("The invoice is due on 21.01.2026.", FEB_20, "2026-01-21", "2026-01-21"),
    ("The invoice was paid on 1/21/2025.", FEB_20, "2025-01-21", "2025-01-21"),
    ("I paid on 10 Feb.", FEB_20, "2025-02-10", "2025-02-10"),
    ("We signed the lease on the 10th of February 2023.", FEB_20, "2023-02-10", "2023-02-10"),
    # A day of the month in words, as said aloud; "of the month" is the month it is.
    ("I paid rent on the first of February.", FEB_20, "2025-02-01", "2025-02-01"),
    ("My birthday is on the third of May.", FEB_20, "2025-05-03", "2025-05-03"),
    ("We got married on June twenty-first.", FEB_20, "2024-06-21", "2024-06-21"),
    ("She was born on the thirty-first of December 1990.", FEB_20, "1990-12-31", "1990-12-31"),
    ("I signed the lease on the 1st of the month.", FEB_20, "2025-02-01", "2025-02-01"),
    ("Rent is due on the first of the month.", FEB_20, "2025-03-01", "2025-03-01"),
    # ... of a month said by its place from this one: that day, whatever the tense.
    ("My mum's surgery is on the 14th of next month.", FEB_20, "2025-03-14", "2025-03-14"),
    ("We paid on the 30th of last month.", FEB_20, "2025-01-30", "2025-01-30"),
    ("The course starts on the 2nd of the following month.", FEB_20, "2025-03-02", "2025-03-02"),
    ("The invoice arrived on the 3rd of this month.", FEB_20, "2025-02-03", "2025-02-03"),
    ("I've lived here since the 3rd of last month.", FEB_20, "2025-01-03", FEB_20),
    # A verb whose past is its present ("quit", "hurt", "cut") tells with a date of a past.
    ("I hurt my back on Monday.", FEB_20, "2025-02-17", "2025-02-17"),
    ("I quit smoking on New Year's Day.", FEB_20, "2025-01-01", "2025-01-01"),
    ("We read it on Friday.", FEB_20, "2025-02-14", "2025-02-14"),
    ("He quits his job on Friday.", FEB_20, "2025-02-21", "2025-02-21"),
    # The day something is set for is ahead, like a booking's.
    ("We set the wedding date for June 12.", FEB_20, "2025-06-12", "2025-06-12"),
    ("We set the date for the 10th.", FEB_20, "2025-03-10", "2025-03-10"),
    # The day something is moved to is ahead, whatever the tense of the move.
    ("We moved the demo to Friday.", FEB_20, "2025-02-21", "2025-02-21"),
    ("The meeting was moved from Monday to Thursday.", FEB_20, "2025-02-27", "2025-02-27"),
    ("The launch was pushed back until June.", FEB_20, "2025-06-01", "2025-06-30"),
    ("They postponed the wedding to March 28.", FEB_20, "2025-03-28", "2025-03-28"),
    ("The call got rescheduled for Monday.", FEB_20, "2025-02-24", "2025-02-24"),
    ("We moved to Berlin in June.", FEB_20, "2024-06-01", "2024-06-30"),
    ("I moved the plants on Monday.", FEB_20, "2025-02-17", "2025-02-17"),
    # A future perfect is ahead, from when it was said "by" the date; "would/should have"
    # look back.
    ("I will have finished the report by Friday.", FEB_20, FEB_20, "2025-02-21"),
    ("We'll have moved out by March.", FEB_20, FEB_20, "2025-03-31"),
    ("I should have called her on Monday.", FEB_20, "2025-02-17", "2025-02-17"),
    # "since" a name: from its latest occurrence up to when it was said, whatever the verb.
    ("I haven't seen Ana since Christmas.", FEB_20, "2024-12-24", "2025-02-20"),
    ("I've been vegan since New Year's Day.", MAR_10, "2025-01-01", "2025-03-10"),
    ("Since Halloween the shop has been closed.", FEB_20, "2024-10-31", "2025-02-20"),
    # "for" an amount in a present perfect: from that long ago up to when it was said.
    ("I've been running every day for three months.", FEB_20, "2024-11-20", "2025-02-20"),
    ("We have lived in Lisbon for two years.", FEB_20, "2023-02-20", "2025-02-20"),
    ("She's been working at Acme for about 6 months.", FEB_20, "2024-08-20", "2025-02-20"),
    ("I haven't smoked for a fortnight.", FEB_20, "2025-02-06", "2025-02-20"),
    ("I have been away for two weeks.", FEB_20, "2025-02-06", "2025-02-20"),
    # A fortnight is two weeks.
    ("I'm moving to Berlin in a fortnight.", FEB_20, "2025-03-03", "2025-03-09"),
    ("I saw her a fortnight ago.", FEB_20, "2025-02-03", "2025-02-09"),
    # Where someone is, or whether they are free, at a month is their plan (last year's).
    ("I'm busy in March, sorry.", FEB_20, "2025-03-01", "2025-03-31"),
    ("We are in Lisbon in April.", FEB_20, "2025-04-01", "2025-04-30"),
    # "is" right after an event and before its date (last year's before); what today is
    # stays today (guard).
    ("The conference is the first week of March.", FEB_20, "2025-03-01", "2025-03-07"),
    ("Our trip is the last week of May.", FEB_20, "2025-05-25", "2025-05-31"),
    ("Today is the 20th.", FEB_20, "2025-02-20", "2025-02-20"),
    # What is approved, requested or confirmed for a month is ahead, as what is booked for
    # it (no time before).
    ("My manager Keiko approved my leave for April.", FEB_20, "2025-04-01", "2025-04-30"),
    ("I requested time off for May.", FEB_20, "2025-05-01", "2025-05-31"),
    # Counted from the day a holiday is named for; the first weekend after it (Saturday 3
    # May and Friday 27 December before).
    ("Dad's 70th is the weekend after Easter.", FEB_20, "2025-04-26", "2025-04-27"),
    ("We flew home the day after Christmas.", FEB_20, "2024-12-26", "2024-12-26"),
    # What one wants now is for the coming holiday (last Christmas before); what one
    # wanted or got, the last (guard).
    ("My daughter wants an Xbox for Christmas.", FEB_20, "2025-12-24", "2025-12-26"),
    ("I got a bike for Christmas.", FEB_20, "2024-12-24", "2024-12-26"),
    # A timetable's present with a particle before its day (last Friday before).
    ("My blood test results come back Friday.", FEB_20, "2025-02-21", "2025-02-21"),
    # ...but "in" is no particle: "is in March" stays a date's "in" (guards).
    ("My sister's baby shower is in March.", FEB_20, "2025-03-01", "2025-03-31"),
    ("My exam results are out in August.", FEB_20, "2025-08-01", "2025-08-31"),
    # A weekday before a preposition of its clause, a month after "come" (no time before).
    ("We met up Tuesday for drinks.", FEB_20, "2025-02-18", "2025-02-18"),
    ("Come March, I'll be a dad.", FEB_20, "2025-03-01", "2025-03-31"),
    # An amount away is as far ahead as "in" it (no time stored before).
    ("Our trip to Peru is three months away.", FEB_20, "2025-05-01", "2025-05-31"),
    ("The wedding is only two weeks away!", FEB_20, "2025-03-03", "2025-03-09"),
    # Composed: an amount back from a time told from now, a name in a named year, a weekday
    # counted within its month or past the nearest one.
    ("A year ago yesterday we adopted Biscuit.", FEB_20, "2024-02-19", "2024-02-19"),
    ("I ran my first marathon two years ago last month.", FEB_20, "2023-01-01", "2023-01-31"),
    ("Two weekends ago we hiked Mount Tam.", FEB_20, "2025-02-08", "2025-02-09"),
    ("We're hosting Thanksgiving this year.", FEB_20, "2025-11-27", "2025-11-27"),
    ("I met her in May last year.", FEB_20, "2024-05-01", "2024-05-31"),
    ("The vote is on the first Tuesday of November.", FEB_20, "2025-11-04", "2025-11-04"),
    ("The Monday before last I had a job interview.", FEB_20, "2025-02-10", "2025-02-10"),
    ("Let's meet the Friday after next.", FEB_20, "2025-03-07", "2025-03-07"),
    # A modified date is read from its modifier: plans ahead, the past behind.
    ("The festival is at the end of May.", FEB_20, "2025-05-25", "2025-05-31"),
    ("My exams start in early June.", FEB_20, "2025-06-01", "2025-06-10"),
    ("We fly out in late April.", FEB_20, "2025-04-21", "2025-04-30"),
    ("The course starts the first week of April.", FEB_20, "2025-04-01", "2025-04-07"),
    ("I moved here at the end of May.", FEB_20, "2024-05-25", "2024-05-31"),
    # "after", "before" and "during" put a date on a simple present's event too.
    ("The gym reopens after Easter.", FEB_20, "2025-04-18", "2025-04-21"),
    ("The store closed before Christmas.", FEB_20, "2024-12-24", "2024-12-26"),
    # A weekday with a day of the month: the nearest such day that is that weekday.
    ("Our flight back is on Sunday the 23rd.", FEB_20, "2025-02-23", "2025-02-23"),
    ("We met on Friday the 13th.", FEB_20, "2024-12-13", "2024-12-13"),
    # A timetable's event that starts on a date: the coming one, for as long as it says.
    ("The course runs for six weeks starting on March 20.", MAR_10, "2025-03-20", "2025-04-30"),
    ("The exhibition runs for a month beginning March 20.", MAR_10, "2025-03-20", "2025-04-19"),
    ("We have classes starting March 20.", MAR_10, "2025-03-20", "2025-03-20"),
    # A long weekend is its Saturday and Sunday and the day either side.
    ("We went to the lake over the long weekend.", FEB_20, "2025-02-14", "2025-02-17"),
    ("We're going camping over the long weekend.", FEB_20, "2025-02-21", "2025-02-24"),
    ("I'm off for the three-day weekend.", MAR_10, "2025-03-14", "2025-03-17"),
    # The holidays, said near them: Christmas Eve to New Year's Day.
    ("We visited my parents over the holidays.", JAN_03, "2024-12-24", "2025-01-01"),
    ("I'm going home for the holidays.", DEC_28, "2024-12-24", "2025-01-01"),
    # "Back in" a month opening a clause looks back from a while after it.
    ("Back in March we painted the fence.", MAR_10, "2024-03-01", "2024-03-31"),
    ("I came back in March.", MAR_10, "2025-03-01", MAR_10),
    # "this coming" is the next one; weekdays counted back; an amount "or so", "or two".
    ("See you this coming Friday.", FEB_20, "2025-02-21", "2025-02-21"),
    ("This coming weekend we hike.", FEB_20, "2025-02-22", "2025-02-23"),
    ("I saw her two Fridays ago.", FEB_20, "2025-02-07", "2025-02-07"),
    # Summers and holidays counted back: one summer ago is the last one over.
    ("Two summers ago we were in Rome.", FEB_20, "2023-06-01", "2023-08-31"),
    ("Two Christmases ago we were in Rome.", FEB_20, "2023-12-24", "2023-12-26"),
    ("Three Easters ago I broke my arm.", FEB_20, "2022-04-15", "2022-04-18"),
    ("Two winters ago the pipes froze.", FEB_20, "2022-12-01", "2023-02-28"),
    ("I finished it a week or so ago.", FEB_20, "2025-02-10", "2025-02-16"),
    ("I finished it a week or two ago.", FEB_20, "2025-02-03", "2025-02-16"),
    ("We'll be done in a day or two.", FEB_20, "2025-02-21", "2025-02-22"),
    ("I saw him two or three days ago.", FEB_20, "2025-02-17", "2025-02-18"),
    ("We'll hear back in 2-3 weeks.", FEB_20, "2025-03-03", "2025-03-16"),
    ("We moved here 2 to 3 years ago.", FEB_20, "2022-01-01", "2023-12-31"),
    ("I'll be there around the 15th.", FEB_20, "2025-03-15", "2025-03-15"),
    # Chat's weekdays, years and contractions.
    ("The party's on Sat.", FEB_20, "2025-02-22", "2025-02-22"),
    ("Meeting pushed to next Wed.", FEB_20, "2025-02-26", "2025-02-26"),
    ("My car broke down last Fri.", FEB_20, "2025-02-14", "2025-02-14"),
    ("Moved here in '19.", FEB_20, "2019-01-01", "2019-12-31"),
    ("Last year in March we went to Rome.", FEB_20, "2024-03-01", "2024-03-31"),
    ("My birthday's on the 9th of June.", FEB_20, "2025-06-09", "2025-06-09"),
    # What is to come within an amount, from when it was said (no date before).
    ("I will reply within two weeks.", FEB_20, FEB_20, "2025-03-06"),
    ("The parcel should arrive within three business days.", FEB_20, FEB_20, "2025-02-25"),
    ("We will decide in the next few days.", FEB_20, FEB_20, "2025-02-23"),
    ("Over the next 3 months we will hire.", FEB_20, FEB_20, "2025-05-20"),
    # The day something is, ending its clause (no date before).
    ("Payday is the 28th.", FEB_20, "2025-02-28", "2025-02-28"),
    ("The deadline was the 15th.", FEB_20, "2025-02-15", "2025-02-15"),
    # A question with no verb proposes: the coming day (the last one before).
    ("Dinner at mine on Saturday?", FEB_20, "2025-02-22", "2025-02-22"),
    ("Drinks Friday?", FEB_20, "2025-02-21", "2025-02-21"),
    ("Great party on Saturday!", FEB_20, "2025-02-15", "2025-02-15"),
    ("How was Saturday?", FEB_20, "2025-02-15", "2025-02-15"),
    # "wanna" says what is wanted next, as "gonna" does (last Saturday before).
    ("Wanna see a movie Saturday?", FEB_20, "2025-02-22", "2025-02-22"),
    ("We wanted to see a movie on Saturday.", FEB_20, "2025-02-15", "2025-02-15"),
    # A weekday before a date is that date, and picks its year (last Friday before).
    ("We have a team offsite on Friday 14 March.", FEB_20, "2025-03-14", "2025-03-14"),
    ("We met on Thursday 14 March.", FEB_20, "2024-03-14", "2024-03-14"),
    ("The demo is on Fri, March 14th.", FEB_20, "2025-03-14", "2025-03-14"),
    # A quarter, or a month "of" a year named so (Q1 and March of this year before).
    ("We're launching in Q1 next year.", FEB_20, "2026-01-01", "2026-03-31"),
    ("Revenue grew in Q2 last year.", FEB_20, "2024-04-01", "2024-06-30"),
    ("The audit is in the first quarter of next year.", FEB_20, "2026-01-01", "2026-03-31"),
    ("We move in March of next year.", FEB_20, "2026-03-01", "2026-03-31"),
    # A time of day alone, said at 10:00: the next such hour of a plan, the last of a past.
    ("I'm meeting Zoe for coffee at 3 pm.", FEB_20, "2025-02-20T15:00Z", "2025-02-20T16:00Z"),
    ("I met Zoe for coffee at 3 pm.", FEB_20, "2025-02-19T15:00Z", "2025-02-19T16:00Z"),
    ("Let's meet at noon.", FEB_20, "2025-02-20T12:00Z", "2025-02-20T13:00Z"),
    ("We met at 8am for breakfast.", FEB_20, "2025-02-20T08:00Z", "2025-02-20T09:00Z"),
    ("I'll call you at 15:30.", FEB_20, "2025-02-20T15:30Z", "2025-02-20T16:30Z"),
    ("I have a meeting at 4pm.", FEB_20, "2025-02-20T16:00Z", "2025-02-20T17:00Z"),
    ("My flight is at 7am.", FEB_20, "2025-02-21T07:00Z", "2025-02-21T08:00Z"),
    # One occasion's simple present is when it next happens (a shop's or a class's is a
    # habit: below), whether the tagger reads the verb as one or as a plural noun.
    ("My flight leaves at 6:45 pm.", FEB_20, "2025-02-20T18:45Z", "2025-02-20T19:45Z"),
    ("My flight leaves at 8 am.", FEB_20, "2025-02-21T08:00Z", "2025-02-21T09:00Z"),
    ("The meeting starts at 3pm.", FEB_20, "2025-02-20T15:00Z", "2025-02-20T16:00Z"),
    (
        "Zoe's flight from Toronto lands at 6:45 pm.",
        FEB_20,
        "2025-02-20T18:45Z",
        "2025-02-20T19:45Z",
    ),
    # The subject's own clause tells no tense of the sentence (the day before, from "booked";
    # last April, January's 28th and last Monday, from "signed", "applied" and "paid"); a verb
    # after the plural keeps it a noun ("of boats in May are lovely": last May).
    ("The course I signed up for starts in April.", FEB_20, "2025-04-01", "2025-04-30"),
    ("The job I applied for closes on the 28th.", FEB_20, "2025-02-28", "2025-02-28"),
    ("The dress I paid for arrives on Monday.", FEB_20, "2025-02-24", "2025-02-24"),
    ("The pictures I took of boats in May are lovely.", FEB_20, "2024-05-01", "2024-05-31"),
    # A date in the subject's own clause tells of the subject when the sentence has its own
    # (yesterday, last Sunday and last Friday before).
    ("The doctor I saw yesterday wants me back in two weeks.", FEB_20, "2025-03-03", "2025-03-09"),
    (
        "The team we played last Sunday plays us again on the 15th.",
        FEB_20,
        "2025-03-15",
        "2025-03-15",
    ),
    (
        "The film we watched on Friday comes out on DVD in March.",
        FEB_20,
        "2025-03-01",
        "2025-03-31",
    ),
    (
        "The apartment we looked at last week is still available.",
        FEB_20,
        "2025-02-10",
        "2025-02-16",
    ),
    # A plan said not to have held gives way to the date said after it (last June before).
    (
        "The wedding was supposed to be in June but it's now in September.",
        FEB_20,
        "2025-09-01",
        "2025-09-30",
    ),
    (
        "I was supposed to fly to Denver yesterday but it got cancelled.",
        FEB_20,
        "2025-02-19",
        "2025-02-19",
    ),
    # What was arranged for a weekday comes before it (last Saturday and Monday before).
    ("I made a reservation for Saturday.", FEB_20, "2025-02-22", "2025-02-22"),
    ("I got an appointment for Monday.", FEB_20, "2025-02-24", "2025-02-24"),
    ("The guy I met at the gym asked me out for Saturday.", FEB_20, "2025-02-22", "2025-02-22"),
    ("I had an appointment on Monday.", FEB_20, "2025-02-17", "2025-02-17"),
    # An event verb's "on" or "from" phrase before the date, like its "to" (last June before).
    ("She comes back from Paris in June.", FEB_20, "2025-06-01", "2025-06-30"),
    (
        "The flight I booked to Rome leaves at 7 pm.",
        FEB_20,
        "2025-02-20T19:00Z",
        "2025-02-20T20:00Z",
    ),
]


def _day(text: str) -> date:
    return date.fromisoformat(text[:10])


def _moment(text: str) -> datetime:
    """A day's first instant, or the instant itself when a time is given (when it was said)."""
    if "T" not in text:
        return datetime.combine(_day(text), datetime.min.time(), UTC)
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[int, agentmem.Memory]]:
    """Every case retained in one bank, each under its own document id."""
    memory = agentmem.AgentMemory(tmp_path_factory.mktemp("forward") / "store")
    bank = memory.bank("cases")
    for index, (text, said, _, _) in enumerate(CASES):
        bank.retain(text, mentioned_at=said, document_id=f"case-{index}")
    by_case = {}
    for index in range(len(CASES)):
        [only] = bank.memories(document_id=f"case-{index}")
        by_case[index] = only
    assert memory.check_integrity().ok
    yield by_case
    memory.close()


def test_the_table_holds_enough_cases() -> None:
    assert len(CASES) >= 60
    assert len({(text, said) for text, said, _, _ in CASES}) == len(CASES)


@pytest.mark.parametrize(
    ("index", "text", "said", "first", "last"),
    [(i, *case) for i, case in enumerate(CASES)],
    ids=[f"{i}:{case[0][:40]}@{case[1][:10]}" for i, case in enumerate(CASES)],
)
def test_stored_occurrence(
    stored: dict[int, agentmem.Memory], index: int, text: str, said: str, first: str, last: str
) -> None:
    memory = stored[index]
    assert memory.text == text
    assert memory.occurred_start is not None and memory.occurred_end is not None
    assert memory.occurred_start == _moment(first)
    if "T" in last:  # up to the moment it was said
        assert memory.occurred_end + timedelta(microseconds=1) == _moment(last)
    else:
        assert memory.occurred_end.date() == _day(last)
        assert memory.occurred_end - memory.occurred_start < timedelta(
            days=(_day(last) - _day(first)).days + 1
        )


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        # After a past date: from its end until it was said; before a coming one: from when
        # it was said until the date begins.
        ("We moved here after Christmas.", "2024-12-27T00:00:00", "2025-02-20T10:00:00"),
        ("I got a dog right after New Year.", "2025-01-02T00:00:00", "2025-02-20T10:00:00"),
        ("I'll finish the report before Friday.", "2025-02-20T10:00:00", "2025-02-21T00:00:00"),
        ("The store closes before Christmas.", "2025-02-20T10:00:00", "2025-12-24T00:00:00"),
        ("I need to renew my passport before June.", "2025-02-20T10:00:00", "2025-06-01T00:00:00"),
        # By a coming date (a deadline): from when it was said through the date.
        ("I need to finish the report by Friday.", "2025-02-20T10:00:00", "2025-02-22T00:00:00"),
        ("The parcel will be delivered by March 3.", "2025-02-20T10:00:00", "2025-03-04T00:00:00"),
        # Until a coming date: from when it was said through the date.
        ("I'm in Paris until Saturday.", "2025-02-20T10:00:00", "2025-02-23T00:00:00"),
        ("The offer is valid until March 31.", "2025-02-20T10:00:00", "2025-04-01T00:00:00"),
        (
            "We're staying with my parents till Sunday.",
            "2025-02-20T10:00:00",
            "2025-02-24T00:00:00",
        ),
        # Until after a coming holiday or day: through it (its date alone before).
        ("The shop is closed until after Easter.", "2025-02-20T10:00:00", "2025-04-22T00:00:00"),
        (
            "The project is on hold till after the 14th.",
            "2025-02-20T10:00:00",
            "2025-03-15T00:00:00",
        ),
        # Through a coming day or month, like until.
        ("The sale runs through March 3.", "2025-02-20T10:00:00", "2025-03-04T00:00:00"),
        ("The museum is open thru June.", "2025-02-20T10:00:00", "2025-07-01T00:00:00"),
        # No other end: the date itself; a date qualifying a noun dates that noun; "by" after
        # a participle names who or what did it, not a deadline; "until" a past date, after a
        # negation, a move or a countdown keeps the date.
        ("I'll start my new job after Easter.", "2025-04-18T00:00:00", "2025-04-22T00:00:00"),
        ("I was inspired by Halloween.", "2024-10-31T00:00:00", "2024-11-01T00:00:00"),
        ("I lived in Berlin until 2019.", "2019-01-01T00:00:00", "2020-01-01T00:00:00"),
        ("I won't know until Saturday.", "2025-02-22T00:00:00", "2025-02-23T00:00:00"),
        ("I won't know until after Easter.", "2025-04-18T00:00:00", "2025-04-22T00:00:00"),
        ("The launch was pushed back until June.", "2025-06-01T00:00:00", "2025-07-01T00:00:00"),
        ("Only three weeks until Easter!", "2025-04-18T00:00:00", "2025-04-22T00:00:00"),
        ("By Monday I was exhausted.", "2025-02-17T00:00:00", "2025-02-18T00:00:00"),
        # "through" a holiday is during it.
        ("I'll be working through Christmas.", "2025-12-24T00:00:00", "2025-12-27T00:00:00"),
        ("I felt better after Monday's meeting.", "2025-02-17T00:00:00", "2025-02-18T00:00:00"),
    ],
)
def test_after_a_past_date_or_before_by_or_until_a_coming_one_is_stored_as_the_time_between(
    store_path: Path, text: str, start: str, end: str
) -> None:
    assert _stored_period(store_path, text) == _period(start, end)


def _stored_period(store_path: Path, text: str) -> tuple[datetime, datetime]:
    """The half-open period the one fact of ``text``, said on 20 February, is stored with,
    read after reopening the store (whose integrity is checked)."""
    with agentmem.AgentMemory(store_path) as mem:
        mem.bank("between").retain(text, mentioned_at=FEB_20)
    with agentmem.AgentMemory(store_path) as mem:
        bank = mem.bank("between")
        [memory] = bank.memories()
        assert bank.check_integrity().problems == ()
        return memory.occurred_start, memory.occurred_end + timedelta(microseconds=1)


def _period(start: str, end: str) -> tuple[datetime, datetime]:
    return (
        datetime.fromisoformat(start).replace(tzinfo=UTC),
        datetime.fromisoformat(end).replace(tzinfo=UTC),
    )


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        # A trip out and back spans both days, the return read from the trip's start (the
        # first day alone before; "back on the 10th" after a comma was the last 10th).
        ("I'm flying to Lisbon on the 5th and back on the 12th.", "2025-03-05", "2025-03-13"),
        ("We're off to Crete on the 3rd, back on the 10th.", "2025-03-03", "2025-03-11"),
        ("I'm flying out on the 28th and back on the 2nd.", "2025-02-28", "2025-03-03"),
        ("We leave Friday, coming home Sunday.", "2025-02-21", "2025-02-24"),
        ("I'll be away from Monday and back by Thursday.", "2025-02-24", "2025-02-28"),
        ("I flew out on the 5th and got back on the 12th.", "2025-02-05", "2025-02-13"),
        ("I left in March and came back in May.", "2024-03-01", "2024-06-01"),
        # A second visit, or what came back, is no return from a trip (guards).
        ("We went to Spain in 2019 and went back in 2022.", "2019-01-01", "2020-01-01"),
        ("I paid on the 5th and got the money back on the 12th.", "2025-02-05", "2025-02-06"),
    ],
)
def test_a_trip_out_and_back_spans_both_days(
    store_path: Path, text: str, start: str, end: str
) -> None:
    assert _stored_period(store_path, text) == _period(start, end)


def test_the_invoice_is_found_in_the_month_it_is_due(mem: agentmem.AgentMemory) -> None:
    bank = mem.bank("billing")
    bank.retain("The invoice is due on March 3.", mentioned_at=FEB_20)
    bank.retain("I paid the electricity bill.", mentioned_at=FEB_20)
    hits = bank.recall("invoice", time_range=("2025-03-01", "2025-04-01"))
    assert [m.text for m in hits.memories] == ["The invoice is due on March 3."]
    assert bank.recall("invoice", time_range=("2024-03-01", "2024-04-01")).memories == []


# --------------------------------------------------------------------------------------------
# Properties: a clause in the future never lands before it was said, one in the past never
# after.


def _ordinal(day: int) -> str:
    suffix = "th" if 10 <= day <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


_NAMED_DATES = st.one_of(
    st.sampled_from(["January", "March", "June", "September", "December"]).map(
        lambda month: f"in {month}"
    ),
    st.tuples(st.sampled_from(["February", "April", "July", "October"]), st.integers(1, 28)).map(
        lambda pair: f"on {pair[0]} {pair[1]}"
    ),
    st.integers(1, 31).map(lambda day: f"on the {_ordinal(day)}"),
    st.sampled_from(["in the spring", "in the summer", "in the fall", "in the winter"]),
    st.sampled_from(["in Q1", "in Q2", "in Q3", "in Q4", "at Christmas", "on Halloween"]),
)
_FUTURE = [
    "We will meet {}.",
    "I'm flying to Oslo {}.",
    "The report is due {}.",
    "We're going to move {}.",
    "I'll call the bank {}.",
]
_PAST = [
    "We met {}.",
    "I flew to Oslo {}.",
    "The report was due {}.",
    "We moved {}.",
    "I called the bank {}.",
]
_SAID = st.datetimes(
    min_value=datetime(2001, 1, 1), max_value=datetime(2039, 12, 31), timezones=st.just(UTC)
)


@pytest.fixture(scope="module")
def property_bank(tmp_path_factory: pytest.TempPathFactory) -> Iterator[agentmem.MemoryBank]:
    memory = agentmem.AgentMemory(tmp_path_factory.mktemp("properties") / "store")
    yield memory.bank("properties")
    assert memory.check_integrity().ok
    memory.close()


_CLAUSES = [(template, "future") for template in _FUTURE] + [(t, "past") for t in _PAST]


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(clause=st.sampled_from(_CLAUSES), when=_NAMED_DATES, said=_SAID)
def test_a_clause_is_dated_on_its_side_of_when_it_was_said(
    property_bank: agentmem.MemoryBank, clause: tuple[str, str], when: str, said: datetime
) -> None:
    """A future-tense date never ends before the day it was said, and never starts before
    the moment it was said when the words say it is to come ("will", "going to", "due"); a
    past one lies before that moment (a period holding it is cut there)."""
    template, tense = clause
    [created] = property_bank.retain(template.format(when), mentioned_at=said).memories
    stored = property_bank.get(created.id)
    assert stored.occurred_start is not None and stored.occurred_end is not None
    if tense == "future":
        assert stored.occurred_end >= said.replace(hour=0, minute=0, second=0, microsecond=0)
        if "flying" not in template:  # a progressive alone may be a state
            assert stored.occurred_start >= said
    else:
        assert stored.occurred_start <= said
        # Said at the very first instant of the period read, nothing of it has passed yet.
        assert stored.occurred_end < said or stored.occurred_start == said


# --------------------------------------------------------------------------------------------
# Numeric dates and the bank's date order

NOT_DATES = [
    "I gave a gift to June.",  # a month after "to" that nothing is moved to is a name
    "We built the shed in half a year.",  # how long it took
    "Use 3/4 of a cup of flour.",
    "The score was 3/4 at half time.",
    "Upgrade to version 1.2.2025 now.",
    "The v3.4.2025 build is broken.",
    "Release 2.10.2025 fixes the bug.",
    "Her number is 555-03-04-2025.",
    "The server sits at 10.3.2025.1 on the LAN.",
    "The tolerance is 0.3 to 1.2 millimetres.",
    "We live on the 5th floor.",
    "Rome fell in the 5th century.",
    "She finished in the 3rd place.",
    "This is my second May in Berlin.",
    "On the first try I failed.",
    "I got a second-hand bike.",
    # "in" + an amount in a clause about the past: how long it took, not when.
    "I finished the marathon in 4 hours 12 minutes.",
    "We built the shed in two weeks.",
    "Haven't talked in a few days!",
    "I lost 5 kg in two months.",
    # "for" an amount outside a present perfect: how long, not when.
    "I lived in Rome for two years.",
    "I had known her for a decade.",
    "I'll be in Tokyo for two weeks.",
    "I've got the car for a week.",
    "She has gone to Spain for a month.",
    "I've been to Paris for a week.",
    # "within" an amount after something else, in the past.
    "Within a month she quit.",
    "It sold out within two days.",
    # Hours away are a distance; a rank is no day.
    "Leeds is two hours away.",
    "She is the 3rd in line.",
    # A time of day alone in a timetable, of a birth, or saying neither morning nor evening.
    "The shop opens at 9am.",
    "My class starts at 9am.",
    "Our team meeting starts at 9am every Monday.",
    "The train we took to Leeds leaves at 6 pm.",
    "I have lunch at noon.",
    "She was born at 3 am.",
    "We arrived at 10.",
    "I'm at 3 percent battery.",
]


# Habits: no single occurrence is meant, so none is stored.
HABITS = [
    "Fatima volunteers at the Red Cross every Saturday.",
    "I wake up at 6:30am every day.",
    "We usually go hiking in May.",
    "Every year in May we go to the lake.",
    "My mom calls me every Sunday.",
    "I go hiking on weekends in summer.",
    "I swim twice a week in June.",
]


@pytest.mark.parametrize("text", NOT_DATES + HABITS)
def test_numbers_that_are_no_dates_and_habits_store_no_occurrence(
    mem: agentmem.AgentMemory, text: str
) -> None:
    [created] = mem.bank("numbers").retain(text, mentioned_at=FEB_20).memories
    stored = mem.bank("numbers").get(created.id)
    assert (stored.occurred_start, stored.occurred_end) == (None, None)


def test_date_order_is_a_validated_persisted_bank_setting(store_path: Path) -> None:
    with agentmem.AgentMemory(store_path) as memory:
        bank = memory.bank("eu")
        assert bank.config.date_order == "MDY"
        for bad in ("YMD", "dmy", "", None, 3):
            with pytest.raises(InvalidInputError, match="date_order"):
                bank.configure(date_order=bad)
        assert bank.config.date_order == "MDY"  # nothing written on a refusal
        bank.configure(date_order="DMY")
    with agentmem.AgentMemory(store_path) as memory:
        bank = memory.bank("eu")
        assert bank.config.date_order == "DMY"
        [created] = bank.retain("The invoice is due on 03/04/2025.", mentioned_at=FEB_20).memories
        stored = bank.get(created.id)
        assert stored.occurred_start == datetime(2025, 4, 3, tzinfo=UTC)
        # A part over 12 reads one way only, whatever the setting.
        [created] = bank.retain("We met on 1/21/2025.", mentioned_at=FEB_20).memories
        assert bank.get(created.id).occurred_start == datetime(2025, 1, 21, tzinfo=UTC)
        assert memory.check_integrity().ok


def test_date_order_reads_queries_too(mem: agentmem.AgentMemory) -> None:
    us, eu = mem.bank("us"), mem.bank("eu")
    eu.configure(date_order="DMY")
    for bank in (us, eu):
        bank.retain("Alice opened the bakery.", occurred_at="2024-04-03", mentioned_at=FEB_20)
        bank.retain("Bob closed the garage.", occurred_at="2024-03-04", mentioned_at=FEB_20)
    query = "What happened on 03/04/2024?"
    first = {b.id: b.recall(query, strategies="temporal").memories[0].text for b in (us, eu)}
    assert first == {"us": "Bob closed the garage.", "eu": "Alice opened the bakery."}
    hit = us.recall("What happened on 21.01.2024?", strategies="temporal")
    assert hit.memories == []  # nothing then, and the query's date was read (no error)


def test_date_order_is_exported_and_imported(tmp_path: Path) -> None:
    export = tmp_path / "bank.jsonl"
    with agentmem.AgentMemory(tmp_path / "a") as memory:
        bank = memory.bank("eu")
        bank.configure(date_order="DMY")
        bank.retain("The invoice is due on 03/04/2025.", mentioned_at=FEB_20)
        bank.export(export)
    header = json.loads(export.read_text().splitlines()[0])
    assert header["config"]["date_order"] == "DMY"
    with agentmem.AgentMemory(tmp_path / "b") as memory:
        bank = memory.import_(export)
        assert bank.config.date_order == "DMY"
        [stored] = bank.memories()
        assert stored.occurred_start == datetime(2025, 4, 3, tzinfo=UTC)


# --------------------------------------------------------------------------------------------
# A named date in a query finds what was said before it


def _nora(bank: agentmem.MemoryBank) -> None:
    bank.retain(
        [
            {
                "role": "user",
                "name": "Nora",
                "content": "We're planning a trip to Porto on the 12th of March",
            }
        ],
        mentioned_at="2025-02-10T18:00:00Z",
    )
    # Filler said on and around the named date, about other things.
    for day in range(1, 29):
        bank.retain(
            [{"role": "user", "name": "Nora", "content": f"I bought {day} apples at the market."}],
            mentioned_at=f"2025-03-{day:02d}T09:00:00Z",
        )


@pytest.mark.parametrize("now", ["2025-02-25T12:00:00Z", "2025-03-11T12:00:00Z"])
def test_a_plan_said_weeks_before_its_date_answers_a_question_about_that_date(
    mem: agentmem.AgentMemory, now: str
) -> None:
    bank = mem.bank("nora")
    _nora(bank)
    hits = bank.recall("Where is Nora going on the 12th of March?", now=now, top_k=3)
    assert "Porto" in hits.memories[0].text
    temporal = bank.recall(
        "Where is Nora going on the 12th of March?", now=now, strategies="temporal"
    )
    [porto] = [h for h in temporal.hits if "Porto" in h.text]
    # First in the temporal arm's own order (the final order also weighs recency).
    assert porto.strategy_details["temporal"]["rank"] == 1
    assert porto.strategy_details["temporal"]["in_period"] == 1.0


def test_the_date_words_are_keyword_evidence(mem: agentmem.AgentMemory) -> None:
    bank = mem.bank("nora")
    _nora(bank)
    # Asked long after, the query's 12th of March is next year's: the temporal arm finds
    # nothing, the keyword arm still finds the turn that names the date.
    hits = bank.recall(
        "Where is Nora going on the 12th of March?",
        now="2025-11-01T12:00:00Z",
        strategies="keyword",
    )
    assert "Porto" in hits.memories[0].text


def test_a_time_told_from_the_sentence_before_is_stored(mem: agentmem.AgentMemory) -> None:
    bank = mem.bank("trip")
    stored = bank.retain(
        "On Monday I flew to Paris. The next day I visited the Louvre. Two days later I took "
        "the train to Lyon. That weekend we hiked in the Alps. After that I went home.",
        mentioned_at="2025-02-20T10:00:00Z",  # a Thursday: Monday was 17 February
    ).memories
    spans = [
        (m.occurred_start.date(), m.occurred_end.date()) if m.occurred_start else None
        for m in stored
    ]
    assert spans == [
        (date(2025, 2, 17), date(2025, 2, 17)),
        (date(2025, 2, 18), date(2025, 2, 18)),
        (date(2025, 2, 20), date(2025, 2, 20)),
        (date(2025, 2, 22), date(2025, 2, 23)),
        None,  # "after that" says no amount of time
    ]
    # Each chat turn is its own message: a turn does not count from the one before.
    turns = bank.retain(
        [
            {"role": "user", "name": "Ana", "content": "On Monday I flew to Paris."},
            {"role": "user", "name": "Bo", "content": "The next day I was ill."},
        ],
        mentioned_at="2025-02-20T10:00:00Z",
    ).memories
    assert turns[1].occurred_start is None
    later = bank.retain(
        "On 3 May 2019 we met in Lisbon. A fortnight later we flew to Rome.",
        mentioned_at="2025-02-20T10:00:00Z",
    ).memories
    assert [m.occurred_start.date() for m in later] == [date(2019, 5, 3), date(2019, 5, 17)]
    assert mem.check_integrity().ok


# (text, the span stored for each of its sentences: first and last day, or None), said on
# Thursday 20 February 2025.
EPISODES: list[tuple[str, list[tuple[str, str] | None]]] = [
    # Sentences that go on telling a dated episode happened in it.
    (
        "Last summer we drove to Santa Fe. We stayed three nights at a motel.",
        [("2024-06-01", "2024-08-31"), ("2024-06-01", "2024-08-31")],
    ),
    (
        "Yesterday's standup ran long. Priya raised the migration risk. We agreed to delay it.",
        [("2025-02-19", "2025-02-19")] * 3,
    ),
    (
        "Next week we fly to Rome. We'll stay near the Pantheon.",
        [("2025-02-24", "2025-03-02"), ("2025-02-24", "2025-03-02")],
    ),
    (
        "On Monday I flew to Paris. The next day I visited the Louvre. It was packed with "
        "tourists.",
        [("2025-02-17", "2025-02-17"), ("2025-02-18", "2025-02-18"), ("2025-02-18", "2025-02-18")],
    ),
    # Not what holds now, what held for years, came after, recurs, or someone was; not after
    # a year or a birth, nor a past after a coming date or a plan after a past one.
    ("Last month I changed jobs. Now I work at Stripe.", [("2025-01-01", "2025-01-31"), None]),
    (
        "Yesterday I met Tom at the station. He worked at Google for years.",
        [("2025-02-19", "2025-02-19"), None],
    ),
    ("On Monday I flew to Paris. Later I moved to Leeds.", [("2025-02-17", "2025-02-17"), None]),
    (
        "In January we visited Kyoto. We hiked every weekend. My grandfather was a sailor there.",
        [("2025-01-01", "2025-01-31"), None, None],
    ),
    (
        "In 2019 I moved to Berlin. I found a job at a startup.",
        [("2019-01-01", "2019-12-31"), None],
    ),
    ("I was born on 3 May 1990. I grew up in Ohio.", [("1990-05-03", "1990-05-03"), None]),
    (
        "Tomorrow is the big demo. We rehearsed the whole pitch twice.",
        [("2025-02-21", "2025-02-21"), None],
    ),
    ("Last week I met Anna. She will join our team.", [("2025-02-10", "2025-02-16"), None]),
    ("On Sunday we had a barbecue. Did you go to it?", [("2025-02-16", "2025-02-16"), None]),
]


def test_a_sentence_that_goes_on_telling_a_dated_episode_is_stored_in_it(
    store_path: Path,
) -> None:
    with agentmem.AgentMemory(store_path) as memory:
        bank = memory.bank("episodes")
        for index, (text, _) in enumerate(EPISODES):
            bank.retain(text, mentioned_at=FEB_20, document_id=f"episode-{index}")
    with agentmem.AgentMemory(store_path) as memory:  # as stored, after reopening
        bank = memory.bank("episodes")
        for index, (text, expected) in enumerate(EPISODES):
            stored = bank.memories(document_id=f"episode-{index}")
            spans = [
                (str(m.occurred_start.date()), str(m.occurred_end.date()))
                if m.occurred_start is not None and m.occurred_end is not None
                else None
                for m in stored
            ]
            assert spans == expected, text
        assert memory.check_integrity().ok
    # A chat turn is its own message: the next one does not go on from it.
    with agentmem.AgentMemory(store_path) as memory:
        turns = (
            memory.bank("chat")
            .retain(
                [
                    {"role": "user", "name": "Ana", "content": "Last summer we drove to Santa Fe."},
                    {"role": "user", "name": "Bo", "content": "We stayed home all summer."},
                ],
                mentioned_at=FEB_20,
            )
            .memories
        )
        assert turns[1].occurred_start is None


DONE_JUST_NOW = [
    "I just landed in Denver.",
    "Just got engaged!!!",
    "We've just moved into our new flat.",
    "The results were just released.",
    "I wanted to tell you I just joined a writers group.",
    "Here's a pic I just took.",
    # "had" of something had once.
    "Charlotte just had her baby!",
    "We just had lunch at the new place.",
]
# "just" as "simply", a pluperfect, a habit, a state, a question, no past at all.
NOT_DONE_JUST_NOW = [
    "I had just left when she called.",
    "I just wanted to say hi.",
    "It was just perfect.",
    "It's just been really hectic lately.",
    "We played games, ate good food, and just hung out together.",
    "I've always just stayed away from cats.",
    "They just put them on for fun.",
    "We just gotta savor them!",
    "Did you just get back?",
    "I just love this song.",
    "He is just a friend.",
    # "had" as a must or a state; "recently" or "lately" tells of weeks.
    "I just had to tell you about it.",
    "I just had no idea what to do.",
    "My cousin just had a tough time recently.",
    "I just got back from a trip to Peru recently.",
]


def test_what_was_just_done_is_stored_in_the_day_before_it_was_said(
    store_path: Path,
) -> None:
    said = datetime(2025, 2, 20, 10, tzinfo=UTC)
    with agentmem.AgentMemory(store_path) as memory:
        bank = memory.bank("just")
        for text in DONE_JUST_NOW + NOT_DONE_JUST_NOW:
            bank.retain(text, mentioned_at=said)
        # A time the sentence names wins over "just".
        bank.retain("I just got back from Paris on Sunday.", mentioned_at=said)
        # A chat turn is one fact: a question after the sentence does not count.
        turn = {"role": "user", "name": "Ana", "content": "I just got back from Lisbon! You?"}
        bank.retain([turn], mentioned_at=said)
    with agentmem.AgentMemory(store_path) as memory:
        stored = {
            m.text: (m.occurred_start, m.occurred_end) for m in memory.bank("just").memories()
        }
        assert {t: stored[t] for t in DONE_JUST_NOW} == {
            t: (said - timedelta(days=1), said - timedelta(microseconds=1)) for t in DONE_JUST_NOW
        }
        assert {t: stored[t] for t in NOT_DONE_JUST_NOW} == {
            t: (None, None) for t in NOT_DONE_JUST_NOW
        }
        lisbon = stored["Ana: I just got back from Lisbon! You?"]
        assert lisbon == (said - timedelta(days=1), said - timedelta(microseconds=1))
        sunday = stored["I just got back from Paris on Sunday."]
        assert sunday[0] is not None and sunday[0].date() == date(2025, 2, 16)
        assert memory.check_integrity().ok
