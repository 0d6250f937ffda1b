# IMAPSieve: a message moved or copied out of Junk is told to textnb serve as ham, unless
# it went to the Trash (deleting spam is no correction).
require ["vnd.dovecot.pipe", "copy", "imapsieve", "environment", "variables"];

if environment :matches "imap.mailbox" "*" {
  set "mailbox" "${1}";
}
if string "${mailbox}" "Trash" {
  stop;
}
pipe :copy "textnb-learn-ham";
