mod cmsg;
mod netdevice;
