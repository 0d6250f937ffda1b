# File each delivered message by textnb's verdict (sieve_before in 90-textnb.conf).
require ["fileinto", "mailbox", "vnd.dovecot.filter"];

# The message passes through textnb: textnb-spamc asks textnb serve, textnb-filter runs
# textnb filter; either adds X-TextNB-Status: Yes, No or Unsure, and on any failure gives
# the message back unchanged, so that it is delivered as if textnb were not there.
filter "textnb-spamc";

# Spam and unsure mail stop here: the user's own script sees only the rest.
if header :is "X-TextNB-Status" "Yes" {
  fileinto :create "Junk";
  stop;
}
if header :is "X-TextNB-Status" "Unsure" {
  fileinto :create "Unsure";
  stop;
}
